import { afterEach, expect, it, vi } from 'vitest';
import type { ApiClient } from '../../src/cli/client.js';
import { plansGroup } from '../../src/cli/commands/plans.js';
import { describeEvent } from '../../src/cli/commands/run-follow.js';
import { LIST_TITLE, NOTIFICATION_TITLE, planTitle } from '../../src/domain/plan-title.js';

// The CLI names a plan by the domain's title rule (`planTitle`), and strips terminal control characters
// from what it gives.

afterEach(() => {
  vi.restoreAllMocks();
});

const at = '2026-06-01T08:00:00.000Z';

const proposed = (markdown: string) =>
  describeEvent({
    seq: 1,
    type: 'plan_proposed',
    at,
    plan_id: 'pln_1',
    round: 1,
    sha256: 'a'.repeat(64),
    markdown,
  });

const line = (title: string) =>
  `• plan proposed: pln_1 (round 1, sha256 aaaaaaaaaaaa) ${title} — drydock plans show pln_1`;

it('runs follow: the plan line carries the one-line title, heading marks dropped before it is cut', () => {
  expect(proposed('\n  ## Add a   cache\n\nbody')).toBe(line('Add a cache'));
  const long = `## ${'word '.repeat(40)}\n\nbody`;
  const title = planTitle(long, NOTIFICATION_TITLE);
  expect(title).toHaveLength(120);
  expect(title.endsWith('…')).toBe(true);
  expect(proposed(long)).toBe(line(title));
});

it('runs follow: control characters in the title do not reach the terminal', () => {
  expect(proposed('# Fix \u001b[31mred\u001b[0m bug\u0007\n')).toBe(line('Fix [31mred[0m bug'));
});

it("plans list: a daemon that sends the plan's text instead of its title shows the title the API would", async () => {
  const markdown = `# \u001b[1mBold\u001b[0m ${'step '.repeat(50)}\n\nbody`;
  const items = [
    {
      id: 'pln_1',
      status: 'pending',
      round: 1,
      approvals: 0,
      approvals_required: 1,
      requested_by: 'alice',
      created_at: at,
      markdown,
    },
  ];
  const body = { items, next_cursor: null };
  const client = {
    request: async () => ({ status: 200, body, text: JSON.stringify(body) }),
  } as unknown as ApiClient;
  const written: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  await plansGroup.commands.list!.run({ client, command: 'plans list', values: {}, args: [] });
  const [, row] = written.join('').trimEnd().split('\n');
  const title = planTitle(markdown, LIST_TITLE);
  expect(title).toHaveLength(200);
  expect(row).toMatch(/^pln_1 +pending +1 +0\/1 +alice +\S+(?: ago)? +\[1mBold\[0m step step/);
  expect(row!.endsWith(title.replaceAll('\u001b', '').trim())).toBe(true);
  expect(row).not.toContain('\u001b');
});
