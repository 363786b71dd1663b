import type { Plan } from '../../domain/types.js';
import { uncommittedNotice } from '../../domain/uncommitted.js';
import { html, type SafeHtml } from '../html.js';

/**
 * The plan page's notice for a plan made while its git workspace had uncommitted changes (Plan.uncommitted):
 * it was made from its commit without them. Nothing for a plan made on a clean workspace.
 */
export function uncommittedNote(plan: Plan): SafeHtml | string {
  const notice = uncommittedNotice(plan);
  return notice ? html`<p class="hint uncommitted" id="plan-uncommitted">${notice}</p>` : '';
}
