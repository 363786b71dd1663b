-- A conversation's frame (src/domain/frame.ts): its system texts and tool definitions, fixed when it starts
-- and sent unchanged by every later request. A conversation stored before this version has no row here and
-- is sent with the constants it started with.
CREATE TABLE conversation_frames (
  conversation_id text COLLATE "C" PRIMARY KEY,
  frame           json NOT NULL,             -- { system, tools, memory? }
  run_id          text COLLATE "C" NOT NULL, -- the run that started the conversation
  created_at      bigint NOT NULL
);
