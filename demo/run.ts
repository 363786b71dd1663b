/**
 * `npm run demo`: drydock end to end, offline. Starts the daemon on a temporary SQLite directory with a
 * scripted stand-in for the Messages API (a local server that replays a fixed conversation; no model and no
 * network is involved), creates a session on a sample git repository, fires a job, shows the plan in the
 * queue, approves it, and prints the execution result and the receipts.
 *
 *   npm run demo                  approve from this script
 *   npm run demo -- --wait        wait (up to 10 minutes) for a person to approve in the web page instead
 *   npm run demo -- --model-only [--port N]
 *                                 only the scripted stand-in (on port N, else a free one): print its
 *                                 address and serve the same conversation to a daemon you start with
 *                                 ANTHROPIC_BASE_URL set to it, until stopped; .ci/newcomer walks the
 *                                 README's quickstart against it
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { issueToken } from '../src/auth/tokens.js';
import { defaultConfig } from '../src/config/load.js';
import { startDaemon } from '../src/daemon.js';
import { silentLogger } from '../src/logger.js';
import { type ModelServer, startModelServer } from '../tests/support/model-server.js';

const wait = process.argv.includes('--wait');
const modelOnly = process.argv.includes('--model-only');
const say = (line = '') => process.stdout.write(`${line}\n`);

const PLAN = `## Add a CONTRIBUTING guide

1. Create \`CONTRIBUTING.md\` describing how to run the tests (\`npm test\`) and the review rule.
2. Check the working tree with \`git status\`.

Risk: low, documentation only.`;

/**
 * The scripted stand-in: plan phase (look around, propose), execute phase (write, check, summarize). It
 * answers any non-empty API key, and serves this one conversation, in order, to whichever daemon asks.
 */
async function scriptedModel(port?: number): Promise<ModelServer> {
  const model = await startModelServer(port === undefined ? {} : { port });
  model.enqueue(
    {
      kind: 'message',
      content: [
        { type: 'text', text: 'Let me look at the repository.' },
        { type: 'tool_use', id: 'toolu_glob', name: 'Glob', input: { pattern: '**/*' } },
      ],
      usage: { input_tokens: 1800, output_tokens: 60, cache_creation_input_tokens: 1500 },
    },
    {
      kind: 'message',
      content: [{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'README.md' } }],
      usage: { input_tokens: 250, output_tokens: 40, cache_read_input_tokens: 1500 },
    },
    {
      kind: 'message',
      content: [
        { type: 'text', text: 'Here is my plan.' },
        { type: 'tool_use', id: 'toolu_plan', name: 'ExitPlanMode', input: { plan: PLAN } },
      ],
      usage: { input_tokens: 300, output_tokens: 180, cache_read_input_tokens: 1500 },
    },
    {
      kind: 'message',
      content: [
        {
          type: 'tool_use',
          id: 'toolu_write',
          name: 'Write',
          input: {
            file_path: 'CONTRIBUTING.md',
            content: '# Contributing\n\nRun `npm test` before you push. Every change needs one review.\n',
          },
        },
      ],
      usage: { input_tokens: 400, output_tokens: 90, cache_read_input_tokens: 1500 },
    },
    {
      kind: 'message',
      content: [
        { type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'git status --short' } },
      ],
      usage: { input_tokens: 150, output_tokens: 30, cache_read_input_tokens: 1500 },
    },
    {
      kind: 'message',
      content: [{ type: 'text', text: 'Added CONTRIBUTING.md; git status shows the new file.' }],
      usage: { input_tokens: 120, output_tokens: 25, cache_read_input_tokens: 1500 },
    },
  );
  return model;
}

/** `--model-only`: the stand-in alone, until SIGTERM or SIGINT. */
async function modelOnlyMain(): Promise<number> {
  const at = process.argv.indexOf('--port');
  const port = at < 0 ? undefined : Number(process.argv[at + 1]);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
    throw new Error('--port expects a port number, 1-65535');
  }
  const model = await scriptedModel(port);
  say(`ANTHROPIC_BASE_URL=${model.url}`);
  say(
    'scripted stand-in for the Messages API: plan (Glob, Read, ExitPlanMode), then execute (Write, Bash, done)',
  );
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await model.close();
  return 0;
}

async function main(): Promise<number> {
  const root = mkdtempSync(join(tmpdir(), 'drydock-demo-'));
  const repo = join(root, 'sample-repo');
  mkdirSync(join(repo, 'src'), { recursive: true });
  writeFileSync(join(repo, 'README.md'), '# sample\n\nA tiny service.\n');
  writeFileSync(join(repo, 'src/app.js'), 'export const answer = () => 42;\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, ...args], {
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'demo',
        GIT_AUTHOR_EMAIL: 'demo@localhost',
        GIT_COMMITTER_NAME: 'demo',
        GIT_COMMITTER_EMAIL: 'demo@localhost',
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: repo,
      },
      encoding: 'utf8',
    }).trim();
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');

  const model = await scriptedModel();
  const config = defaultConfig();
  config.data_dir = join(root, 'data');
  config.server.port = Number(process.env.DRYDOCK_PORT ?? 0);
  config.log_level = 'silent';
  const admin = issueToken('admin', 'admin', 'admin', Date.now());
  const approver = issueToken('reviewer', 'reviewer', 'approver', Date.now());
  const daemon = await startDaemon({
    config: { ...config, admin_token: admin.token },
    logger: silentLogger(),
    model: new Anthropic({ apiKey: 'demo', baseURL: model.url, maxRetries: 0 }),
    announce: () => {},
  });
  await daemon.store.createToken(approver.record);
  const api = async (method: string, path: string, body?: unknown, token = admin.token) => {
    const res = await fetch(`${daemon.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: the demo reads API answers loosely
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const until = async (runId: string, statuses: string[], ms: number) => {
    const end = Date.now() + ms;
    for (;;) {
      const run = await api('GET', `/v1/runs/${runId}`);
      if (statuses.includes(run.status)) return run;
      if (Date.now() > end) throw new Error(`run ${runId} is still ${run.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  try {
    say(`drydock demo (scripted stand-in model at ${model.url}; nothing leaves this machine)`);
    say(`daemon:   ${daemon.url}   web page: ${daemon.url}/ui   data: ${config.data_dir}`);
    say(`tokens:   admin ${admin.token}`);
    say(`          approver (log in to /ui with this one) ${approver.token}`);
    // The default execute mode, manual: every Write, Edit and Bash of the execution waits for a person.
    const session = await api('POST', '/v1/sessions', { workspace: repo, name: 'sample-repo' });
    const job = await api('POST', `/v1/sessions/${session.id}/jobs`, {
      cron: '0 9 * * 1-5',
      timezone: 'UTC',
      approximate: true,
      prompt: 'Add a short contributing guide.',
    });
    say(`\nsession ${session.id} on ${repo}`);
    say(
      `job      ${job.id}: "${job.cron}" → effective "${job.effective_cron}", next ${job.next_fire_at} (jittered ${job.next_fire_jittered_at}), expires ${job.expires_at}`,
    );
    const fired = await api('POST', `/v1/jobs/${job.id}/run`);
    say(`fired    run ${fired.id} (plan mode)`);
    const planRun = await until(fired.id, ['planned', 'failed'], 30_000);
    if (planRun.status !== 'planned') throw new Error(`plan run ${planRun.status}: ${planRun.error}`);

    const queue = await api('GET', '/v1/plans?status=pending_approval');
    say('\nthe plan queue:');
    for (const p of queue.items)
      say(`  ${p.id}  round ${p.round}  requested by ${p.requested_by}  sha256 ${p.sha256.slice(0, 12)}…`);
    const plan = await api('GET', `/v1/plans/${planRun.plan_id}`);
    say(`\n${plan.markdown.replace(/^/gm, '  | ')}`);

    let execRunId: string;
    if (wait) {
      say(
        `\nwaiting for a person: open ${daemon.url}/ui/plans/${plan.id}, log in with the approver token, approve.`,
      );
      const end = Date.now() + 600_000;
      for (;;) {
        const p = await api('GET', `/v1/plans/${plan.id}`);
        const exec = p.runs.find((r: { phase: string }) => r.phase === 'execute');
        if (exec) {
          execRunId = exec.id;
          break;
        }
        if (p.status !== 'pending_approval') throw new Error(`the plan was ${p.status}`);
        if (Date.now() > end) throw new Error('nobody approved within 10 minutes');
        await new Promise((r) => setTimeout(r, 500));
      }
    } else {
      const approved = await api(
        'POST',
        `/v1/plans/${plan.id}/approve`,
        { sha256: plan.sha256, comment: 'looks good' },
        approver.token,
      );
      say(`\napproved by reviewer → ${approved.next}`);
      execRunId = approved.run.id;
    }
    // Manual mode: each changing call parks as a tool approval until a person allows or denies it.
    const ended = ['completed', 'failed', 'canceled', 'budget_exceeded', 'refused', 'interrupted'];
    let exec = await until(execRunId, ['awaiting_input', ...ended], 60_000);
    const decided = new Set<string>();
    while (exec.status === 'awaiting_input') {
      const run = await api('GET', `/v1/runs/${execRunId}`);
      const waiting = run.waiting_on;
      if (waiting?.kind === 'tool_approval' && !decided.has(waiting.id)) {
        const approval = await api('GET', `/v1/tool-approvals/${waiting.id}`);
        say(`  the run waits for ${waiting.detail}`);
        say(`    ${approval.tool} ${JSON.stringify(approval.input).slice(0, 100)}`);
        if (wait) {
          say(`    (allow it on ${daemon.url}/ui/tool-approvals)`);
        } else {
          await api('POST', `/v1/tool-approvals/${approval.id}`, { decision: 'allow' }, approver.token);
          say('    allowed by reviewer');
        }
        const end = Date.now() + (wait ? 600_000 : 30_000);
        while ((await api('GET', `/v1/tool-approvals/${approval.id}`)).status === 'pending') {
          if (Date.now() > end) throw new Error('nobody decided the tool call in time');
          await new Promise((r) => setTimeout(r, 200));
        }
        decided.add(approval.id);
      } else {
        await new Promise((r) => setTimeout(r, 100)); // resuming after the decision
      }
      exec = await until(execRunId, ['awaiting_input', ...ended], 60_000);
    }
    say(
      '  (a session with execute_mode "edits" lets Write and Edit run on their own; "auto" also allow-listed commands)',
    );
    if (exec.status !== 'completed') throw new Error(`execute run ${exec.status}: ${exec.error}`);
    say(`\nexecution: ${exec.status} on branch drydock/${plan.id}, commit ${exec.result_commit}`);
    say(`  ${exec.diff_stat.replace(/\n/g, '\n  ')}`);
    say(
      `  your checkout is untouched: HEAD ${git('rev-parse', '--short', 'HEAD')}; the work is on the branch:`,
    );
    say(`  ${git('log', '--oneline', '-1', `drydock/${plan.id}`)}`);

    say('\nreceipts:');
    for (const r of [planRun, exec]) {
      const u = r.usage;
      say(
        `  ${r.phase.padEnd(8)} ${r.id}  ${r.turns} turns  in ${u.input_tokens} / out ${u.output_tokens} / cache write ${u.cache_write_5m_tokens} / cache read ${u.cache_read_tokens} tokens  $${r.cost_usd.toFixed(6)}  ${r.duration_ms} ms (${r.active_ms} ms active)`,
      );
    }
    say('\ndemo finished.');
    return 0;
  } finally {
    await daemon.stop();
    await model.close();
    if (!process.env.DRYDOCK_DEMO_KEEP) rmSync(root, { recursive: true, force: true });
  }
}

(modelOnly ? modelOnlyMain() : main()).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`demo failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
