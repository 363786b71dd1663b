import { describe, expect, it } from 'vitest';
import type { Current } from '../../src/cli/apply/export.js';
import { planApply } from '../../src/cli/apply/plan.js';
import {
  type ApplyDocument,
  applyDocumentSchema,
  type JobJson,
  type SessionJson,
} from '../../src/http/contract/index.js';

// The plan of `drydock apply` alone (pure): what it compares as the daemon stores it, and what it refuses
// before any request. The command against a real daemon is tests/cli/client-apply.test.ts.

const session = (over: Partial<SessionJson> = {}): SessionJson => ({
  id: 'ses_1',
  name: 'nightly',
  workspace: '/srv/repo',
  owner: 'ops',
  status: 'open',
  defaults: { network: ['a.example.com', 'b.example.com'] },
  limits: {},
  created_at: '2026-06-01T00:00:00.000Z',
  closed_at: null,
  made_by_trigger: false,
  ...over,
});

const job = (over: Partial<JobJson>): JobJson =>
  ({
    id: 'job_1',
    session_id: 'ses_1',
    name: 'review',
    cron: '0 9 * * *',
    effective_cron: '0 9 * * *',
    timezone: 'Europe/Berlin',
    recurring: true,
    approximate: false,
    overlap: 'buffer_one',
    jitter: { max_seconds: null, approximate: false },
    prompt: 'Review.',
    options: {},
    ...over,
  }) as JobJson;

const current = (jobs: JobJson[], sessions = [session()]): Current => ({
  sessions,
  jobs: new Map([['ses_1', jobs]]),
  triggers: [],
});

const doc = (jobs: unknown[], sessions?: unknown[]): ApplyDocument =>
  applyDocumentSchema.parse({
    apiVersion: 'drydock/v1',
    sessions: sessions ?? [
      {
        name: 'nightly',
        workspace: '/srv/repo',
        defaults: { network: ['B.example.com', 'a.example.com'] },
        jobs,
      },
    ],
  });

describe('planApply', () => {
  it('compares as the daemon stores: network lists sorted and lower case, time zones without case', () => {
    const plan = planApply(
      doc([{ name: 'review', cron: '0 9 * * *', timezone: 'europe/berlin', prompt: 'Review.' }]),
      current([job({})]),
      false,
    );
    expect(plan).toEqual({ changes: [], unmanaged: [], problems: [] });
  });

  it('compares a hand-written file as the daemon stores it: a cron nickname, jitter.approximate, a one-shot left without recurring, a workspace with a trailing slash', () => {
    const handWritten = [
      {
        name: 'review',
        cron: '@daily',
        timezone: 'Europe/Berlin',
        prompt: 'Review.',
        jitter: { approximate: true },
      },
      {
        name: 'once',
        cron: '0  9 1 jun mon',
        timezone: 'Europe/Berlin',
        prompt: 'Once.',
        jitter: { max_seconds: null },
      },
    ];
    const stored = [
      job({ cron: '0 0 * * *', approximate: true, jitter: { max_seconds: null, approximate: true } }),
      job({ id: 'job_2', name: 'once', cron: '0 9 1 JUN MON', prompt: 'Once.', recurring: false }),
    ];
    const sessions = [
      {
        name: 'nightly',
        workspace: '/srv/repo/',
        defaults: { network: ['a.example.com', 'b.example.com'] },
        jobs: handWritten,
      },
    ];
    expect(planApply(doc([], sessions), current(stored), false)).toEqual({
      changes: [],
      unmanaged: [],
      problems: [],
    });
    // What does differ still shows: the approximate minute asked through jitter, and a cron that changed.
    const changed = planApply(
      doc(
        [],
        [{ ...sessions[0], jobs: [{ ...handWritten[0], cron: '@hourly', jitter: { approximate: false } }] }],
      ),
      current(stored),
      false,
    );
    expect(changed.changes).toMatchObject([
      {
        op: 'update_job',
        fields: [
          { field: 'cron', to: '@hourly' },
          { field: 'approximate', to: false },
        ],
      },
    ]);
  });

  it('leaves a job without a name alone, with --prune too, and says so', () => {
    const plan = planApply(doc([]), current([job({ id: 'job_x', name: null })]), true);
    expect(plan.changes).toEqual([]);
    expect(plan.unmanaged).toEqual(['job nightly/job_x: unmanaged (it has no name)']);
  });

  it('leaves sessions a trigger made and sessions without a name out of --prune', () => {
    const plan = planApply(
      doc([], []),
      current(
        [],
        [
          session({ id: 'ses_t', name: 'schedule weekly', made_by_trigger: true }),
          session({ id: 'ses_n', name: 'ses_n' }),
          session({ id: 'ses_p', name: 'scratch' }),
        ],
      ),
      true,
    );
    expect(plan.changes.map((c) => (c.op === 'close_session' ? c.session.id : c.op))).toEqual(['ses_p']);
  });

  it('refuses a file that names an object twice', () => {
    const twice = { name: 'review', cron: '0 9 * * *', prompt: 'Review.' };
    const plan = planApply(doc([twice, twice]), current([]), false);
    expect(plan.problems).toEqual(['the file names job "nightly/review" twice']);
  });
});
