-- drydock schema, version 19: a conversation's frame (src/domain/frame.ts): its system texts and tool
-- definitions, fixed when it starts and sent unchanged by every later request. A conversation stored before
-- this version has no row here and is sent with the constants it started with.
CREATE TABLE conversation_frames (
  conversation_id TEXT PRIMARY KEY,
  frame           TEXT NOT NULL,   -- JSON: { system, tools, memory? }
  run_id          TEXT NOT NULL,   -- the run that started the conversation
  created_at      INTEGER NOT NULL
);
