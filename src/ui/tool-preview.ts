import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Workspace } from '../agent/tools/workspace.js';
import { mcpToolOf } from '../domain/mcp-names.js';
import type { Plan, Session, ToolApproval } from '../domain/types.js';
import { prefixInRepository } from '../workspace/git.js';
import type { HiddenPaths } from '../workspace/hidden.js';
import { worktreePath } from '../workspace/paths.js';
import { parseUnifiedDiff, renderDiff, visibleLines } from './diff.js';
import { html, type SafeHtml } from './html.js';
import { unifiedTextDiff } from './text-diff.js';

// What a pending tool call would do, shown to the person who decides it: a Write as the diff of the file it
// would write against the file as it is now in the execution's worktree (a new file: all lines added), an
// Edit as old_string → new_string applied to the current file with context around it, a Bash command as
// the command. The tool input as JSON stays one click away. The current file is read through the same
// Workspace the tools use, so a path leading out of the worktree (`..`, a symbolic link) is never read.

/** Files larger than this are not read for a preview. */
const MAX_CURRENT_BYTES = 1_000_000;

interface Current {
  /** The file's text, '' when it does not exist. */
  text: string;
  exists: boolean;
  /** Why the current file could not be used (then `text` is ''). */
  problem: string | null;
  /** The path as the diff names it. */
  path: string;
}

/** Where the execution works: the plan's worktree (in the session's subdirectory), or the workspace itself. */
async function executionRoot(
  workRoot: string,
  plan: Plan | null,
  session: Session | null,
): Promise<string | null> {
  if (!session) return null;
  if (!plan?.workspaceCommit) return session.workspace;
  const prefix = await prefixInRepository(session.workspace).catch(() => '');
  return join(resolve(worktreePath(workRoot, plan.id)), prefix);
}

async function currentFile(root: string | null, filePath: string, hidden: HiddenPaths): Promise<Current> {
  const none = (problem: string | null): Current => ({ text: '', exists: false, problem, path: filePath });
  if (!root) return none('the session is gone, so its files cannot be read');
  let ws: Workspace;
  try {
    ws = await Workspace.open(root, hidden);
  } catch {
    return none("the execution's worktree is not there (yet), so the current file cannot be read");
  }
  let abs: string;
  try {
    abs = await ws.resolve(filePath);
  } catch (err) {
    return none(`the path is refused: ${(err as Error).message}`);
  }
  const path = (() => {
    try {
      return ws.relative(abs);
    } catch {
      return filePath;
    }
  })();
  const info = await stat(abs).catch(() => null);
  if (!info) return { text: '', exists: false, problem: null, path };
  if (!info.isFile()) return { text: '', exists: true, problem: 'it is not a regular file', path };
  if (info.size > MAX_CURRENT_BYTES) {
    return {
      text: '',
      exists: true,
      problem: `the current file is too large to compare (${info.size} bytes)`,
      path,
    };
  }
  const bytes = await readFile(abs).catch(() => null);
  if (!bytes) return { text: '', exists: true, problem: 'the current file cannot be read', path };
  if (bytes.includes(0)) return { text: '', exists: true, problem: 'the current file is binary', path };
  return { text: bytes.toString('utf8'), exists: true, problem: null, path };
}

function pretty(input: unknown): string {
  try {
    return JSON.stringify(input, null, 2) ?? String(input);
  } catch {
    return String(input);
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function diffBlock(diff: string, idPrefix: string): SafeHtml {
  return diff === ''
    ? html`<p class="muted">The file would not change.</p>`
    : renderDiff(parseUnifiedDiff(diff), { idPrefix });
}

/** The preview of one pending tool call, with its JSON in a closed <details>. */
export async function toolPreview(
  a: ToolApproval,
  ctx: { workRoot: string; hidden: HiddenPaths; plan: Plan | null; session: Session | null },
): Promise<SafeHtml> {
  const input = (a.input ?? {}) as Record<string, unknown>;
  const json = html`<details class="tool-json"><summary>Tool input as JSON</summary><pre aria-label="Tool input">${visibleLines(pretty(a.input))}</pre></details>`;
  const id = `tap-${a.id}`;
  let view: SafeHtml;
  const filePath = str(input.file_path);
  if (a.tool === 'Write' && filePath !== null && str(input.content) !== null) {
    const root = await executionRoot(ctx.workRoot, ctx.plan, ctx.session);
    const current = await currentFile(root, filePath, ctx.hidden);
    const content = str(input.content)!;
    const diff = unifiedTextDiff(current.text, content, { path: current.path, created: !current.exists });
    view = html`<p>${current.exists ? 'Replaces' : 'Creates'} <code>${visibleLines(current.path)}</code> (${content.length} characters)${current.problem ? html`; <span class="warning">${current.problem}, so the diff is against an empty file</span>` : ''}.</p>
${diffBlock(diff, id)}`;
  } else if (
    a.tool === 'Edit' &&
    filePath !== null &&
    str(input.old_string) !== null &&
    str(input.new_string) !== null
  ) {
    const oldString = str(input.old_string)!;
    const newString = str(input.new_string)!;
    const all = input.replace_all === true;
    const root = await executionRoot(ctx.workRoot, ctx.plan, ctx.session);
    const current = await currentFile(root, filePath, ctx.hidden);
    const count = oldString === '' ? 0 : current.text.split(oldString).length - 1;
    let note: SafeHtml | string = '';
    let diff: string;
    if (count > 0) {
      const first = current.text.indexOf(oldString);
      const after = all
        ? current.text.split(oldString).join(newString)
        : current.text.slice(0, first) + newString + current.text.slice(first + oldString.length);
      diff = unifiedTextDiff(current.text, after, { path: current.path });
      if (count > 1 && !all) {
        note = html`<p class="warning">old_string occurs ${count} times in the file: the Edit will fail unless it is made unique (replace_all is not set). The first place is shown.</p>`;
      } else if (all) note = html`<p class="muted">Replaces all ${count} places.</p>`;
    } else {
      diff = unifiedTextDiff(oldString, newString, { path: current.path });
      note = html`<p class="warning">${current.problem ?? (current.exists ? 'old_string is not in the current file (the Edit will fail as it stands)' : 'the file does not exist (the Edit will fail as it stands)')}; shown is old_string → new_string alone.</p>`;
    }
    view = html`<p>Edits <code>${visibleLines(current.path)}</code>.</p>${note}
${diffBlock(diff, id)}`;
  } else if (a.tool === 'Bash' && str(input.command) !== null) {
    const description = str(input.description);
    view = html`${description && html`<p>${visibleLines(description)}</p>`}<pre class="cmd-preview" aria-label="Command">$ ${visibleLines(str(input.command)!)}</pre>${
      typeof input.timeout === 'number' ? html`<p class="muted">Timeout ${input.timeout} ms.</p>` : ''
    }`;
  } else if (mcpToolOf(a.tool)) {
    // An MCP call: which server, which of its tools, and the exact input it runs with once allowed.
    const ref = mcpToolOf(a.tool)!;
    return html`<div class="tool-preview"><p>Calls the tool <code>${visibleLines(ref.tool)}</code> of MCP server <strong>${visibleLines(ref.server)}</strong> with this input:</p><pre aria-label="Tool input">${visibleLines(pretty(a.input))}</pre></div>`;
  } else {
    return html`<div class="tool-preview"><pre aria-label="Tool input">${visibleLines(pretty(a.input))}</pre></div>`;
  }
  return html`<div class="tool-preview">${view}</div>
${json}`;
}
