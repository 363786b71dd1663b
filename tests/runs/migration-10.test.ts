import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../src/store/migrations.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../support/harness.js';

// Migration 10 on a real SQLite file holding version-9 data: the runs table is rebuilt (its status CHECK
// gains `refused`) without losing a run or a reference to one; stored thinking options move to the new shape.

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('drydock-migration-10-');
});
afterEach(() => tmp.remove());

describe('migration 10', () => {
  it('keeps runs and what refers to them, rewrites thinking options, and lets a run end refused', async () => {
    const file = join(tmp.path, 'drydock.db');
    const now = Date.now();
    const old = new SqliteStore({ file, migrations: loadMigrations().slice(0, 9), now: () => now });
    const db = old.db;
    const session = db.prepare(
      `INSERT INTO sessions (id, name, workspace, owner, defaults, status, created_at) VALUES (?, 'n', '/w', 'o', ?, 'open', 1)`,
    );
    session.run(
      'ses_budget',
      JSON.stringify({ model: 'claude-haiku-4-5', thinking: { enabled: true, budget_tokens: 2048 } }),
    );
    session.run('ses_off', JSON.stringify({ thinking: { enabled: false } }));
    session.run('ses_on', JSON.stringify({ thinking: { enabled: true }, budget_usd: 2 }));
    session.run('ses_none', JSON.stringify({ budget_usd: 1 }));
    db.prepare(
      `INSERT INTO runs (id, session_id, source, phase, status, prompt, requested_by, created_at, overrides, cost_usd)
       VALUES ('run_1', 'ses_budget', 'manual', 'plan', 'planned', 'task', 'alice', 5, ?, 0.25)`,
    ).run(JSON.stringify({ thinking: { enabled: false } }));
    const execute = db.prepare(
      `INSERT INTO runs (id, session_id, source, phase, status, prompt, requested_by, created_at, conversation_id)
       VALUES (?, 'ses_budget', 'manual', 'execute', ?, 'approved', 'bob', 8, 'run_1')`,
    );
    execute.run('run_exec_waiting', 'queued');
    execute.run('run_exec_started', 'queued');
    db.prepare(
      `INSERT INTO conversation_messages (conversation_id, seq, role, content, run_id, created_at)
       VALUES ('conv_other', 1, 'user', '[{"type":"text","text":"started"}]', 'run_exec_started', 9)`,
    ).run();
    db.prepare(
      `INSERT INTO questions (id, run_id, session_id, tool_use_id, questions, prior_results, status, created_at, expires_at)
       VALUES ('qst_1', 'run_1', 'ses_budget', 'toolu_1', '{}', '[]', 'answered', 6, 7)`,
    ).run();
    db.prepare(
      `INSERT INTO conversation_messages (conversation_id, seq, role, content, run_id, created_at)
       VALUES ('run_1', 1, 'user', '[{"type":"text","text":"task"}]', 'run_1', 5)`,
    ).run();
    await old.close();

    const store = new SqliteStore({ file, now: () => now });
    try {
      const v = await store.schemaVersion();
      expect(v.current).toBe(v.latest);
      expect((await store.getSession('ses_budget'))?.defaults).toEqual({
        model: 'claude-haiku-4-5',
        thinking: { budget_tokens: 2048 },
      });
      expect((await store.getSession('ses_off'))?.defaults.thinking).toBe('off');
      expect((await store.getSession('ses_on'))?.defaults).toEqual({ thinking: 'adaptive', budget_usd: 2 });
      expect((await store.getSession('ses_none'))?.defaults).toEqual({ budget_usd: 1 });
      const run = await store.getRun('run_1');
      expect(run).toMatchObject({
        status: 'planned',
        prompt: 'task',
        costUsd: 0.25,
        overrides: { thinking: 'off' },
      });
      // An execute run that had not started opens its own conversation; one that had keeps its own.
      expect((await store.getRun('run_exec_waiting'))?.conversationId).toBeNull();
      expect((await store.getRun('run_exec_started'))?.conversationId).toBe('run_1');
      expect(store.db.pragma('foreign_key_check')).toEqual([]);
      expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
      // The question still refers to its run; a question for a run that does not exist is still refused.
      expect(() =>
        store.db
          .prepare(
            `INSERT INTO questions (id, run_id, session_id, tool_use_id, questions, prior_results, status, created_at, expires_at)
             VALUES ('qst_2', 'run_missing', 'ses_budget', 'toolu_2', '{}', '[]', 'pending', 6, 7)`,
          )
          .run(),
      ).toThrow(/FOREIGN KEY/);
      // The new status, and the stop reason of a stored message.
      expect(await store.transitionRun('run_1', ['planned'], 'refused')).toBe(true);
      expect((await store.getRun('run_1'))?.status).toBe('refused');
      await store.appendMessages(
        'run_1',
        'run_1',
        [{ role: 'assistant', content: [{ type: 'text', text: 'paused' }], stopReason: 'pause_turn' }],
        now,
      );
      await store.appendMessages(
        'run_1',
        'run_1',
        [{ role: 'assistant', content: [{ type: 'text', text: 'and done' }], stopReason: 'end_turn' }],
        now,
      );
      const conversation = await store.loadConversation('run_1');
      // The continuation of a paused turn is the same message.
      expect(conversation.map((m) => [m.role, m.content.length, m.stopReason])).toEqual([
        ['user', 1, undefined],
        ['assistant', 2, 'end_turn'],
      ]);
    } finally {
      await store.close();
    }
  });
});
