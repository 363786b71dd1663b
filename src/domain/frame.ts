/**
 * What a conversation with the model is framed by: its system texts and its tool definitions, exactly as
 * sent. Computed once, when the conversation starts, stored, and sent unchanged by every later request of
 * it (every turn, a resume after a crash, a restart or a takeover, a revision round): models with preserved
 * thinking check that nothing before a thinking block sent back (the top-level `system`, `tools`, and the
 * earlier messages) changed since the block was made, and refuse it otherwise ("Preserved thinking",
 * platform.claude.com/docs/build-with-claude/preserved-thinking).
 */
export interface ConversationFrame {
  /** The system prompt's texts, in order; the last one carries the cache breakpoint (agent/request.ts). */
  system: string[];
  /** The tool definitions, as sent (`tools: [...]`). */
  tools: Record<string, unknown>[];
  /** The project's instructions file the system prompt holds, when it holds one. */
  memory?: MemoryUsed;
}

/** Which project memory file went into a frame, for people (the plan page, the run's events). */
export interface MemoryUsed {
  /** Its path in the workspace: CLAUDE.md, .claude/CLAUDE.md or AGENTS.md. Several when both CLAUDE.md exist. */
  files: string[];
  /** Where it was read: the workspace's files, or a commit's tree (a pull request's base, a plan's commit). */
  from: { kind: 'workspace' } | { kind: 'commit'; commit: string };
  /** sha256 of the text sent (after any cut), hex. */
  sha256: string;
  /** Bytes of the files as read, before any cut. */
  bytes: number;
  /** Whether the text was cut at `memory.max_bytes`. */
  cut: boolean;
}
