// What the model wrote in one turn besides its tool calls, for a call that needs it: ExitPlanMode without a
// `plan` takes the plan from here (see validatePlan in tools/plan-tools.ts).

/** The prose of one assistant turn. */
export interface TurnProse {
  /** Its text blocks, joined by a blank line. */
  text: string;
  /**
   * Its last thinking block's `thinking`: on the models that return text written between tool calls as
   * thinking (the 5.5 family), the prose just before a call arrives there, after the blocks of reasoning
   * that came first. Thinking is shown summarized (or not at all, with `display: "omitted"`), never in full.
   * Redacted thinking (`redacted_thinking`, whose `data` is encrypted) is never read.
   */
  thinking: string;
}

export const NO_PROSE: TurnProse = Object.freeze({ text: '', thinking: '' });

type Block = { type: string; text?: unknown; thinking?: unknown };

/** The prose of a turn's content blocks; blank blocks count as none. */
export function turnProse(blocks: readonly Block[]): TurnProse {
  const of = (type: string, key: 'text' | 'thinking'): string[] =>
    blocks.flatMap((b) => {
      const v = b.type === type ? b[key] : undefined;
      return typeof v === 'string' && v.trim() !== '' ? [v] : [];
    });
  return { text: of('text', 'text').join('\n\n'), thinking: of('thinking', 'thinking').at(-1) ?? '' };
}
