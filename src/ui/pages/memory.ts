import type { ConversationFrame } from '../../domain/frame.js';
import { html, type SafeHtml } from '../html.js';

/**
 * The project memory the plan's conversation was framed with (src/agent/memory.ts): which file, read from
 * where, its size and whether it was cut, and the text the model was sent, folded. Repository text: shown as
 * text only.
 */
export function memorySection(frame: ConversationFrame | null): SafeHtml {
  const heading = html`<h2 id="memory">Project memory</h2>`;
  if (!frame)
    return html`${heading}<p class="muted" id="memory-none">Not recorded for this conversation (it started before drydock kept it).</p>`;
  const m = frame.memory;
  if (!m)
    return html`${heading}<p id="memory-none">No CLAUDE.md, .claude/CLAUDE.md or AGENTS.md was read: the model had none.</p>`;
  const from = m.from.kind === 'commit' ? html`commit <code>${m.from.commit}</code>` : 'the workspace';
  const text = frame.system.at(-1) ?? '';
  return html`${heading}
<details id="memory-details">
  <summary><span id="memory-files">${m.files.join(', ')}</span> from ${from}: <span id="memory-size">${m.bytes} bytes</span>${
    m.cut
      ? html`, <span class="warning" id="memory-cut">cut to runs.memory_max_bytes</span>`
      : html`, <span id="memory-cut">whole</span>`
  }</summary>
  <p class="muted">sha256 of the text sent <code id="memory-sha256">${m.sha256}</code></p>
  <pre class="untrusted" id="memory-text">${text}</pre>
</details>`;
}
