import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TokenAuth } from '../../src/github/auth.js';
import { GithubApi } from '../../src/github/client.js';
import { createLogger } from '../../src/logger.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';

// GithubApi.listFailedJobs against the fake GitHub: the jobs of a workflow run (GET .../actions/runs/:id/jobs)
// and the check runs of a check suite (GET .../check-suites/:id/check-runs), every page, only those that failed.

const TOKEN = 'ghp_FAKEjobs0123456789abcdefghijklmnopqrst';
const REPO = 'acme/widgets';

let github: FakeGithub;
let api: GithubApi;

beforeEach(async () => {
  github = await startFakeGithub({ token: TOKEN });
  api = new GithubApi({
    auth: new TokenAuth(TOKEN),
    baseUrl: github.url,
    logger: createLogger('silent'),
    lookupRetry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 10 },
  });
});
afterEach(async () => {
  api.close();
  await github.close();
});

const job = (i: number, conclusion: string) => ({
  id: i,
  name: `job ${i}`,
  conclusion,
  html_url: `https://github.com/${REPO}/actions/runs/7/job/${i}`,
  steps: [
    { name: 'setup', conclusion: 'success', number: 1 },
    { name: `step of ${i}`, conclusion, number: 2 },
  ],
});

describe('listFailedJobs', () => {
  it('reads every page of a workflow run’s jobs (100 a page, filter latest) and keeps the failed ones', async () => {
    const jobs = Array.from({ length: 230 }, (_, i) => job(i, i % 50 === 7 ? 'failure' : 'success'));
    jobs.push(job(900, 'timed_out'), job(901, 'cancelled'));
    github.setWorkflowJobs(REPO, 7, jobs);
    const failed = await api.listFailedJobs(REPO, { kind: 'workflow_run', runId: 7 });
    expect(failed.map((j) => j.name)).toEqual([
      'job 7',
      'job 57',
      'job 107',
      'job 157',
      'job 207',
      'job 900',
    ]);
    expect(failed[0]).toEqual({
      name: 'job 7',
      conclusion: 'failure',
      url: `https://github.com/${REPO}/actions/runs/7/job/7`,
      detailsUrl: null,
      failedSteps: ['step of 7'],
    });
    const asked = github.calls.filter((c) => c.path === `/repos/${REPO}/actions/runs/7/jobs`);
    expect(asked).toHaveLength(3);
    for (const c of asked) expect(c.status).toBe(200);
  });

  it('lists a check suite’s failed check runs with their details pages; drops links that are not http(s)', async () => {
    github.setCheckRuns(REPO, 42, [
      {
        name: 'ci',
        conclusion: 'failure',
        html_url: 'javascript:alert(1)',
        details_url: 'https://ci.example/1',
      },
      { name: 'lint', conclusion: 'success', html_url: 'https://github.com/x', details_url: null },
    ]);
    expect(await api.listFailedJobs(REPO, { kind: 'check_suite', suiteId: 42 })).toEqual([
      { name: 'ci', conclusion: 'failure', url: null, detailsUrl: 'https://ci.example/1', failedSteps: [] },
    ]);
  });

  it('answers GitHub’s 404 for a run it does not know as a GithubCallError', async () => {
    await expect(api.listFailedJobs(REPO, { kind: 'workflow_run', runId: 8 })).rejects.toMatchObject({
      status: 404,
    });
  });
});
