// The one error family of drydock's domain: a refusal carries a stable code and a message safe to show a
// person. No HTTP status here: the API maps codes to statuses in `http/errors.ts`, the web UI in
// `ui/errors.ts`. The codes are part of the API (clients read `error.code`), so a code is never renamed.

/** Every code a domain refusal may carry; each surface has one status for each. */
export const ERROR_CODES = [
  /** The thing named does not exist. */
  'not_found',
  /** The thing is not in a state that allows this (closed, disabled, decided, ...). */
  'conflict',
  /** A schedule trigger's own job or session: change it through its trigger. */
  'managed_by_trigger',
  /** A plan made against a commit the workspace has moved past. */
  'stale',
  /** A plan past its approval deadline. */
  'expired',
  /** The plan text a person decided on is not the plan's current text. */
  'sha256_mismatch',
  /** A requester approving their own plan (or allowing its tool calls) while that is off. */
  'self_approval',
  /** A caller whose role may not make this change: only an admin makes something more permissive. */
  'forbidden',
  /** The same person approving a plan twice. */
  'already_approved',
  /** A question or tool approval resolved already. */
  'not_pending',
  /** Answers that do not fit the question asked. */
  'invalid_answers',
  /** A cron expression the scheduler cannot use. */
  'invalid_cron',
  /** A request whose parts do not fit together (fields that belong to another kind of trigger, ...). */
  'invalid_request',
  /** A prompt naming placeholders that nothing fills. */
  'invalid_prompt',
  /** A workspace that is not an absolute path to an existing directory, or holds drydock's own files. */
  'invalid_workspace',
  /** A schedule's time zone that is not an IANA zone. */
  'invalid_timezone',
  /** A model that is retired or has no price. */
  'invalid_model',
  /** A page cursor this server did not issue. */
  'bad_cursor',
  /** A trigger that reached its hourly cap of runs. */
  'capped',
  /** A run that would start past a spend cap (a trigger's, a session's or the global daily_usd or daily_runs). */
  'spend_cap',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** A refusal of the domain: what went wrong as a code, and in words. */
export class DomainError<C extends ErrorCode = ErrorCode> extends Error {
  constructor(
    readonly code: C,
    message: string,
    /** What the refusal is about, shown to clients as `error.details` (a spend cap's figures). */
    readonly details?: unknown,
  ) {
    super(message);
  }
}
