import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { DomainError, ErrorCode } from '../domain/errors.js';
import { API_STATUS } from '../http/errors.js';

/**
 * The web UI's one table from a domain error's code to the status of the page that shows the refusal (the
 * page itself says why, in the error's words). A page answers as the API does (`API_STATUS`) unless a row
 * here says otherwise; today none does.
 */
export const PAGE_STATUS: Readonly<Record<ErrorCode, ContentfulStatusCode>> = { ...API_STATUS };

/** The status of a page that shows this refusal. */
export function pageStatus(err: DomainError): ContentfulStatusCode {
  return PAGE_STATUS[err.code];
}
