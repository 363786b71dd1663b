import { type ModelConfig, modelLifecycleWarnings } from '../../models/catalogue.js';
import { html, type SafeHtml } from '../html.js';

/**
 * A notice for a page that shows work which will run on these models: each one that retires within 30 days
 * (or has retired: its runs now fail without a request), with its date and replacement. Nothing otherwise.
 */
export function modelNotice(
  config: ModelConfig,
  models: readonly (string | null | undefined)[],
  now: number,
): SafeHtml | '' {
  const named = [...new Set(models.filter((m): m is string => typeof m === 'string' && m !== ''))];
  const warnings = named.flatMap((m) => modelLifecycleWarnings(config, m, now));
  if (warnings.length === 0) return '';
  return html`<p class="warning" id="model-notice" role="status">${warnings.join(' ')}</p>`;
}
