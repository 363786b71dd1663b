import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { conversationFrame } from '../../src/agent/frame.js';
import type { ConversationFrame } from '../../src/domain/frame.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { givenRun, T0 } from '../store/contract/fixtures.js';

// Which frame a conversation is sent with: computed once when it starts, the stored one ever after, the
// constants for a conversation stored before frames were. On a real SQLite file.

let dir: string;
let store: SqliteStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'drydock-frame-'));
  store = new SqliteStore({ file: join(dir, 'drydock.db'), now: () => T0 });
  await givenRun(store, 'run_1');
  await givenRun(store, 'run_2');
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const CONSTANT: ConversationFrame = { system: ['base', 'plan mode'], tools: [{ name: 'Read' }] };

/** A phase whose frame() says how often it was asked, and answers `next` each time. */
function phase(next: () => ConversationFrame) {
  let asked = 0;
  return {
    constantFrame: CONSTANT,
    frame: async () => {
      asked += 1;
      return next();
    },
    asked: () => asked,
  };
}

describe('conversationFrame', () => {
  it('a new conversation: the phase computes its frame once, and it is stored before any message', async () => {
    const p = phase(() => ({ system: ['base', 'memory v1'], tools: [{ name: 'Read' }, { name: 'mcp__x' }] }));
    const at = { conversationId: 'conv_1', runId: 'run_1', now: T0 };
    const frame = await conversationFrame(store, p, at, []);
    expect(frame.system).toEqual(['base', 'memory v1']);
    expect(p.asked()).toBe(1);
    expect(await store.loadFrame('conv_1')).toEqual(frame);
  });

  it('later (a resume, a revision round): the stored frame, whatever the phase would compute now', async () => {
    let version = 1;
    const p = phase(() => ({ system: ['base', `memory v${version}`], tools: [] }));
    const first = await conversationFrame(
      store,
      p,
      { conversationId: 'conv_1', runId: 'run_1', now: T0 },
      [],
    );
    await store.appendMessages(
      'conv_1',
      'run_1',
      [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
      T0,
    );
    version = 2;
    const messages = await store.loadConversation('conv_1');
    const again = await conversationFrame(
      store,
      p,
      { conversationId: 'conv_1', runId: 'run_2', now: T0 },
      messages,
    );
    expect(again).toEqual(first);
    expect(again.system[1]).toBe('memory v1');
    expect(p.asked()).toBe(1);
  });

  it('a conversation stored before frames were: the constants, and nothing is stored for it', async () => {
    const p = phase(() => ({ system: ['base', 'memory'], tools: [] }));
    await store.appendMessages(
      'conv_old',
      'run_1',
      [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
      T0,
    );
    const messages = await store.loadConversation('conv_old');
    const frame = await conversationFrame(
      store,
      p,
      { conversationId: 'conv_old', runId: 'run_1', now: T0 },
      messages,
    );
    expect(frame).toEqual(CONSTANT);
    expect(p.asked()).toBe(0);
    expect(await store.loadFrame('conv_old')).toBeNull();
  });

  it('a start that died after storing the frame but before its first message: that frame again', async () => {
    const p = phase(() => ({ system: ['base', `asked ${p.asked()}`], tools: [] }));
    const at = { conversationId: 'conv_1', runId: 'run_1', now: T0 };
    const first = await conversationFrame(store, p, at, []);
    expect(await conversationFrame(store, p, at, [])).toEqual(first);
    expect(p.asked()).toBe(1);
  });
});
