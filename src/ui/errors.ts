import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { DomainError, ErrorCode } from '../domain/errors.js';

/**
 * The web UI's one table from a domain error's code to the status of the page that shows the refusal (the
 * page itself says why, in the error's words). Every code has its row; the compiler holds the list to
 * `ERROR_CODES`.
 */
export const PAGE_STATUS: Readonly<Record<ErrorCode, ContentfulStatusCode>> = {
  not_found: 404,
  conflict: 409,
  managed_by_trigger: 409,
  stale: 409,
  expired: 410,
  sha256_mismatch: 409,
  self_approval: 403,
  already_approved: 409,
  not_pending: 409,
  invalid_answers: 422,
  invalid_cron: 422,
  bad_cursor: 400,
  capped: 429,
};

/** The status of a page that shows this refusal. */
export function pageStatus(err: DomainError): ContentfulStatusCode {
  return PAGE_STATUS[err.code];
}
