import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/store/group-commit.js';

/** A write whose end the test decides: each call is kept with its items until `finish` is called. */
function heldWrites() {
  const calls: { items: string[]; finish: () => void; fail: (err: Error) => void }[] = [];
  const write = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({ items, finish: () => resolve(items.map((i) => `${i}!`)), fail: reject });
    });
  return { calls, write };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('writes the calls of one turn together, and gives each caller its own result', async () => {
    const { calls, write } = heldWrites();
    const g = new GroupCommit(write);
    const answers = Promise.all([g.add('a'), g.add('b'), g.add('c')]);
    await turn();
    expect(calls.map((c) => c.items)).toEqual([['a', 'b', 'c']]);
    calls[0]!.finish();
    expect(await answers).toEqual(['a!', 'b!', 'c!']);
  });

  it('keeps one write in flight: calls made meanwhile wait for it and go together in the next', async () => {
    const { calls, write } = heldWrites();
    const g = new GroupCommit(write);
    const first = g.add('a');
    await turn();
    const later = [g.add('b')];
    await turn();
    later.push(g.add('c'));
    await turn();
    // Still only the first write: b and c wait for it.
    expect(calls.map((c) => c.items)).toEqual([['a']]);
    calls[0]!.finish();
    expect(await first).toBe('a!');
    await turn();
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b', 'c']]);
    calls[1]!.finish();
    expect(await Promise.all(later)).toEqual(['b!', 'c!']);
  });

  it('a failed write fails its own callers only; the next write goes on', async () => {
    const { calls, write } = heldWrites();
    const g = new GroupCommit(write);
    const failed = g.add('a');
    await turn();
    const next = g.add('b');
    calls[0]!.fail(new Error('store refused'));
    await expect(failed).rejects.toThrow('store refused');
    await turn();
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b']]);
    calls[1]!.finish();
    expect(await next).toBe('b!');
  });
});
