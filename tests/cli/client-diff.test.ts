import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { git } from '../support/git-repo.js';
import { seedExecution } from '../ui/execution-seed.js';
import { runCli } from './cli-process.js';

let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon({});
});
afterAll(async () => {
  await d?.stop();
});

const parts = () => ({
  dir: d.dir,
  store: d.daemon.store,
  clock: { now: () => Date.now() },
  config: d.config,
});
const cli = (args: string[]) => runCli(args, { DRYDOCK_URL: d.daemon.url, DRYDOCK_TOKEN: ADMIN_TOKEN });

describe('drydock runs diff', () => {
  it('prints the diff as git wrote it when piped (it applies), --stat the files, --json the body', async () => {
    const x = await seedExecution(parts(), {
      changes: {
        'src/app.ts': 'export const a = 2;\r\nexport const b = "\x1b[31m";\n',
        'NOTES.md': '# Notes\n',
      },
    });
    const r = await cli(['runs', 'diff', x.run.id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${git(x.repo, 'diff', '--no-color', x.base, x.run.resultCommit!)}\n`);
    // Piped, nothing was changed: it applies to the plan's commit and gives the execution's files.
    const check = join(d.dir, 'check');
    git(x.repo, 'worktree', 'add', '-q', '--detach', check, x.base);
    execFileSync('git', ['-C', check, 'apply'], { input: r.stdout });
    expect(readFileSync(join(check, 'src/app.ts'), 'utf8')).toBe(
      'export const a = 2;\r\nexport const b = "\x1b[31m";\n',
    );

    const stat = await cli(['runs', 'diff', x.run.id, '--stat']);
    expect(stat.code).toBe(0);
    expect(stat.stdout.split('\n').map((l) => l.split(/\s+/).join(' '))).toEqual([
      'FILE ADDED REMOVED',
      'NOTES.md 1 0',
      'src/app.ts 2 1',
      '',
    ]);
    const json = await cli(['runs', 'diff', x.run.id, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ state: 'ready', run_id: x.run.id, shown_files: 2 });
  });

  it('exits 1 with the reason when there is no diff, and for a planning run', async () => {
    const running = await seedExecution(parts(), { status: 'running' });
    const pending = await cli(['runs', 'diff', running.run.id]);
    expect(pending.code).toBe(1);
    expect(pending.stdout).toBe('');
    expect(pending.stderr).toBe(
      `drydock: run ${running.run.id}: no diff (pending): the execution has not recorded a commit yet (run running)\n`,
    );
    const planning = await cli(['runs', 'diff', running.planRun.id]);
    expect(planning.code).toBe(1);
    expect(planning.stderr).toContain('409 not_an_execution');
    const none = await seedExecution(parts(), { changes: {} });
    const empty = await cli(['runs', 'diff', none.run.id]);
    expect(empty.code).toBe(0);
    expect(empty.stderr).toContain('the execution finished without changing a file');
  });
});
