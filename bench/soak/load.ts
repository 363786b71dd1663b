import { createHash, randomUUID } from 'node:crypto';
import type { Target } from './balancer.js';
import type { Reply } from './http.js';
import { ASK_MARKER } from './model.js';
import type { SoakOptions } from './options.js';
import type { PullRequestPayloads } from './payload.js';
import { bump, sleep } from './stats.js';

// The load of the soak, driven over the daemon's HTTP API as its users would, and the record of everything
// the API acknowledged: that record is what the audit holds the database to afterwards.
//   - setup: sessions, 1,000 `* * * * *` jobs (UTC), one github trigger on pull_request.opened;
//   - deliveries: signed pull_request.opened webhooks at a steady rate, each with its own X-GitHub-Delivery and
//     pull request number; a delivery that fails on the wire is sent again with the same id (as GitHub
//     redelivers) until the daemon acknowledges it;
//   - decisions: every tick, a few random plans of the pending queue are approved (by an approver who requested
//     none of them), rejected with a comment, or sent back for revision;
//   - answers: every pending question is answered.
// A request that fails on the wire while the daemon is down (or being killed) counts as refused, not as
// acknowledged; only decisions and answers the API answered with 200 are recorded as acknowledged. With
// several replicas the load goes through a balancer (balancer.ts): a replica that is down is left out.
// A 503 (the daemon is up but its database is not: a PostgreSQL restart) is a temporary refusal: a delivery
// answered 503 is sent again, as one failing on the wire is.

export interface CreatedJob {
  id: string;
  sessionId: string;
  createdAt: number;
  /** next_fire_jittered_at of the job as created: the audit checks its own jitter computation against it. */
  firstDueAt: number;
  firstSlotAt: number;
  asks: boolean;
}

export interface AckedDecision {
  id: string;
  planId: string;
  kind: 'approve' | 'reject' | 'revise';
  identity: string;
  comment: string | null;
  sha256: string;
  planStatus: string;
  runId: string | null;
}

export interface AckedAnswer {
  questionId: string;
  runId: string;
  answers: Record<string, string>;
  by: string;
}

export interface DeliveryRecord {
  key: string;
  number: number;
  attempts: number;
  wireErrors: number;
  /** Answers 503 (store unavailable): sent again like a wire error. */
  unavailable: number;
  /** The acknowledging answer: 202 (received) or 200 (a redelivery the daemon had already recorded). */
  ack: { status: number; deliveryId: string; outcome: string; runIds: string[]; duplicate: boolean } | null;
  /** A non-2xx answer (not retried). */
  refusedWith: number | null;
}

export interface LoadTally {
  /** By "kind status" (or "kind error CODE"). */
  decisionCalls: Record<string, number>;
  answerCalls: Record<string, number>;
  listCalls: Record<string, number>;
  deliveryAttempts: Record<string, number>;
}

const DECISION_IDENTITY = 'soak-approver';

export class Load {
  readonly jobs: CreatedJob[] = [];
  readonly decisions: AckedDecision[] = [];
  readonly answers: AckedAnswer[] = [];
  readonly deliveries: DeliveryRecord[] = [];
  readonly tally: LoadTally = { decisionCalls: {}, answerCalls: {}, listCalls: {}, deliveryAttempts: {} };
  triggerId = '';
  private running = false;
  private readonly inflight = new Set<Promise<unknown>>();
  private loops: Promise<void>[] = [];
  private timer: NodeJS.Timeout | null = null;
  private nextNumber = 1_000;
  private giveUpAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly target: Target,
    private readonly tokens: { admin: string; approver: string },
    private readonly o: SoakOptions,
    private readonly random: () => number,
    private readonly payloads: PullRequestPayloads,
    private readonly workspace: string,
  ) {}

  private async must(method: string, path: string, body: object, expect: number): Promise<any> {
    for (let attempt = 1; ; attempt++) {
      const r = await this.target.call(method, path, { token: this.tokens.admin, body });
      if (r.ok && r.status === expect) return r.body;
      if (r.ok || attempt >= 5) {
        throw new Error(`${method} ${path}: ${r.ok ? `${r.status} ${JSON.stringify(r.body)}` : r.error}`);
      }
      await sleep(500);
    }
  }

  /** Sessions, jobs (8 requests at a time), the trigger. */
  async setup(): Promise<void> {
    const perSession = Math.ceil(this.o.jobs / this.o.sessions);
    const sessions: string[] = [];
    for (let s = 0; s < this.o.sessions; s++) {
      const created = await this.must(
        'POST',
        '/v1/sessions',
        { workspace: this.workspace, name: `soak session ${s + 1}` },
        201,
      );
      sessions.push(created.id);
    }
    let next = 0;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= this.o.jobs) return;
        const asks = i % this.o.askEvery === 0;
        const sessionId = sessions[Math.floor(i / perSession)]!;
        const job = await this.must(
          'POST',
          `/v1/sessions/${sessionId}/jobs`,
          {
            cron: '* * * * *',
            timezone: 'UTC',
            prompt: `Soak job ${i + 1}: look over the README and propose tidying it.${asks ? ` ${ASK_MARKER}` : ''}`,
          },
          201,
        );
        this.jobs.push({
          id: job.id,
          sessionId,
          createdAt: Date.parse(job.created_at),
          firstSlotAt: Date.parse(job.next_fire_at),
          firstDueAt: Date.parse(job.next_fire_jittered_at),
          asks,
        });
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const trigger = await this.must(
      'POST',
      '/v1/triggers',
      {
        kind: 'github',
        name: 'soak pull requests',
        events: ['pull_request.opened'],
        filters: { repositories: [this.payloads.repository] },
        prompt: 'Plan a review of {{repository}}#{{number}} ({{head_ref}} into {{base_ref}}).',
        hourly_cap: 10_000,
      },
      201,
    );
    this.triggerId = trigger.id;
  }

  start(): void {
    this.running = true;
    const every = 1000 / this.o.webhookRate;
    if (this.o.webhookRate > 0) {
      const t0 = Date.now();
      let sent = 0;
      // Steady rate: each tick sends what is due since t0, so a slow tick does not lower the rate.
      this.timer = setInterval(
        () => {
          const due = Math.floor((Date.now() - t0) / every) + 1;
          while (this.running && sent < due) {
            sent += 1;
            this.track(this.deliver());
          }
        },
        Math.min(every, 250),
      );
    }
    this.loops = [
      this.loop(this.o.decideEveryMs, () => this.decide()),
      this.loop(this.o.answerEveryMs, () => this.answer()),
    ];
  }

  /** Stops starting work; deliveries still unacknowledged get until `graceMs` to be acknowledged. */
  async stop(graceMs: number): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    await Promise.all(this.loops);
    this.giveUpAt = Date.now() + graceMs;
    while (this.inflight.size && Date.now() < this.giveUpAt + 12_000) await sleep(100);
  }

  private track(p: Promise<unknown>): void {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  private async loop(everyMs: number, tick: () => Promise<void>): Promise<void> {
    while (this.running) {
      const t0 = Date.now();
      await tick();
      const rest = everyMs - (Date.now() - t0);
      if (rest > 0) await sleep(rest);
    }
  }

  private async deliver(): Promise<void> {
    const number = this.nextNumber++;
    const rec: DeliveryRecord = {
      key: randomUUID(),
      number,
      attempts: 0,
      wireErrors: 0,
      unavailable: 0,
      ack: null,
      refusedWith: null,
    };
    this.deliveries.push(rec);
    const body = this.payloads.body(number);
    const headers = {
      'x-github-event': 'pull_request',
      'x-github-delivery': rec.key,
      'x-hub-signature-256': this.payloads.sign(body),
      'user-agent': 'GitHub-Hookshot/soak',
    };
    // Redelivered (same id) until acknowledged, also after the load stopped, within stop()'s grace.
    for (;;) {
      rec.attempts += 1;
      const r = await this.target.call('POST', '/webhooks/github', { body, headers, timeoutMs: 10_000 });
      bump(this.tally.deliveryAttempts, r.ok ? String(r.status) : `error ${r.error}`);
      if (r.ok && (r.status === 202 || r.status === 200)) {
        rec.ack = {
          status: r.status,
          deliveryId: String(r.body?.delivery_id ?? ''),
          outcome: String(r.body?.outcome ?? ''),
          runIds: Array.isArray(r.body?.run_ids) ? r.body.run_ids : [],
          duplicate: r.body?.duplicate === true,
        };
        return;
      }
      if (r.ok && r.status !== 503) {
        rec.refusedWith = r.status;
        return;
      }
      if (r.ok) rec.unavailable += 1;
      else rec.wireErrors += 1;
      if (Date.now() + 1_000 > this.giveUpAt) return;
      await sleep(1_000);
    }
  }

  private async list(path: string): Promise<any[] | null> {
    const r: Reply = await this.target.call('GET', path, { token: this.tokens.approver });
    bump(
      this.tally.listCalls,
      r.ok ? `GET ${path.split('?')[0]} ${r.status}` : `GET ${path.split('?')[0]} error`,
    );
    return r.ok && r.status === 200 && Array.isArray(r.body?.items) ? r.body.items : null;
  }

  private async decide(): Promise<void> {
    const items = await this.list('/v1/plans?status=pending_approval&limit=100');
    if (!items?.length) return;
    const picked = new Set<number>();
    while (picked.size < Math.min(this.o.decisionsPerTick, items.length)) {
      picked.add(Math.floor(this.random() * items.length));
    }
    for (const i of picked) {
      const plan = items[i];
      const roll = this.random();
      const kind = roll < 0.45 ? 'approve' : roll < 0.85 ? 'reject' : 'revise';
      const comment =
        kind === 'approve'
          ? null
          : kind === 'reject'
            ? `Not now (soak reject of ${plan.id}).`
            : `Please also cover the CONTRIBUTING file (soak revise of ${plan.id}).`;
      const body =
        kind === 'approve'
          ? { sha256: plan.sha256 }
          : kind === 'reject'
            ? { comment }
            : { feedback: comment, sha256: plan.sha256 };
      const r = await this.target.call('POST', `/v1/plans/${plan.id}/${kind}`, {
        token: this.tokens.approver,
        body,
      });
      bump(this.tally.decisionCalls, r.ok ? `${kind} ${r.status}` : `${kind} error ${r.error}`);
      if (r.ok && r.status === 200) {
        const d = r.body?.decision;
        this.decisions.push({
          id: d?.id,
          planId: plan.id,
          kind,
          identity: DECISION_IDENTITY,
          comment,
          sha256: plan.sha256,
          planStatus: r.body?.plan?.status,
          runId: r.body?.run?.id ?? null,
        });
      }
    }
  }

  private async answer(): Promise<void> {
    const items = await this.list('/v1/questions?status=pending&limit=200');
    if (!items?.length) return;
    for (const q of items) {
      // Every other question waits until it is old: its session stays busy past the next slot (coalescing).
      const late = createHash('sha256').update(String(q.id)).digest()[0]! % 2 === 1;
      if (late && Date.now() - Date.parse(q.created_at) < this.o.lateAnswerMs) continue;
      const answers: Record<string, string> = {};
      for (const asked of q.questions ?? []) {
        const options = asked.options ?? [];
        answers[asked.question] = options[Math.floor(this.random() * options.length)]?.label;
      }
      const r = await this.target.call('POST', `/v1/questions/${q.id}/answers`, {
        token: this.tokens.approver,
        body: { answers },
      });
      bump(this.tally.answerCalls, r.ok ? `answer ${r.status}` : `answer error ${r.error}`);
      if (r.ok && r.status === 200) {
        this.answers.push({ questionId: q.id, runId: q.run_id, answers, by: DECISION_IDENTITY });
      }
    }
  }
}

export { DECISION_IDENTITY };
