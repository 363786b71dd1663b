import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN } from '../support/daemon.js';
import { deliver, PR_NUMBER, prPayload, type TriggerWorld, triggerWorld } from '../triggers/helpers.js';
import { runCli } from './cli-process.js';

// A GitHub delivery names the triggers it fired: signed pull_request webhooks reach a real daemon (its model a
// scripted server, its repository a local clone), fire one trigger and then two, and GET /v1/deliveries,
// drydock deliveries list and drydock deliveries show say which. A GitHub delivery is stored with no trigger
// of its own (one delivery can fire several); the triggers are those of the runs it started.

vi.setConfig({ testTimeout: 60_000 });

let w: TriggerWorld;

const cli = (args: string[]) => runCli(args, { DRYDOCK_URL: w.d.daemon.url, DRYDOCK_TOKEN: ADMIN_TOKEN });

beforeAll(async () => {
  w = await triggerWorld();
});

afterAll(async () => {
  await w?.close();
});

describe('GitHub deliveries name the triggers they fired', () => {
  it('one trigger fired: trigger_id is it; two fired: trigger_ids has both; the CLI shows them', async () => {
    const reviews = await w.trigger({ name: 'reviews', events: ['pull_request.opened'], prompt: 'Review' });
    // Looks at the delivery but lets it pass: not among the triggers it fired.
    const issues = await w.trigger({ name: 'issues', events: ['issues.opened'], prompt: 'Triage' });

    const one = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }));
    expect(one.status).toBe(202);
    expect(one.body.outcome, JSON.stringify(one.body)).toBe('accepted');
    const first = (await w.d.api('GET', `/v1/deliveries/${one.body.delivery_id}`)).body;
    expect(first).toMatchObject({
      source: 'github',
      event: 'pull_request.opened',
      trigger_id: reviews.id,
      trigger_ids: [reviews.id],
      run_ids: [expect.stringMatching(/^run_/)],
    });

    const audits = await w.trigger({ name: 'audits', events: ['pull_request.opened'], prompt: 'Audit' });
    const payload = prPayload('opened', { sha: w.repo.base });
    payload.number = PR_NUMBER + 1;
    payload.pull_request.number = PR_NUMBER + 1;
    const two = await deliver(w.d, 'pull_request', payload);
    expect(two.body.outcome, JSON.stringify(two.body)).toBe('accepted');
    const second = (await w.d.api('GET', `/v1/deliveries/${two.body.delivery_id}`)).body;
    expect(second.run_ids).toHaveLength(2);
    expect(second.trigger_id).toBeNull();
    expect([...second.trigger_ids].sort()).toEqual([reviews.id, audits.id].sort());
    // The listing says the same, and a trigger's filter still finds the deliveries it fired.
    const listed = (await w.d.api('GET', `/v1/deliveries?trigger_id=${audits.id}`)).body.items;
    expect(listed.map((x: any) => x.id)).toEqual([two.body.delivery_id]);
    expect(listed[0].trigger_ids).toEqual(second.trigger_ids);

    const show = await cli(['deliveries', 'show', one.body.delivery_id]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^trigger +${reviews.id}$`, 'm'));
    expect(show.stdout).toMatch(new RegExp(`^fired +${reviews.id}$`, 'm'));
    const showTwo = await cli(['deliveries', 'show', two.body.delivery_id]);
    expect(showTwo.stdout).toMatch(/^trigger +-$/m);
    expect(showTwo.stdout).toMatch(new RegExp(`^fired +${second.trigger_ids.join(',')}$`, 'm'));

    const list = await cli(['deliveries', 'list']);
    expect(list.code, list.stderr).toBe(0);
    const row = (id: string) =>
      list.stdout
        .split('\n')
        .find((l) => l.startsWith(id))!
        .split(/\s{2,}/);
    expect(row(one.body.delivery_id).slice(2, 6)).toEqual([
      'github',
      'pull_request.opened',
      'accepted',
      reviews.id,
    ]);
    expect(row(two.body.delivery_id)[5]).toBe(second.trigger_ids.join(','));
    expect(list.stdout).not.toContain(issues.id);
  });
});
