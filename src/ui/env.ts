import type { Identity } from '../auth/tokens.js';
import type { FormFields } from './form.js';

/** What the session guard puts on the context of every authenticated /ui request. */
export type UiEnv = {
  Variables: {
    viewer: Identity;
    /** The store's key of this session (the sha256 of its id): logout revokes it. */
    session: Buffer;
    /** The CSRF token this session's forms carry. */
    csrf: string;
    /** The parsed form of a POST (already checked for its CSRF token). */
    form: FormFields;
  };
};
