import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DeliverRequestError } from '../../src/delivery/worker.js';
import { DomainError, ERROR_CODES } from '../../src/domain/errors.js';
import { API_STATUS } from '../../src/http/errors.js';
import { DecisionError } from '../../src/plans/decisions.js';
import { QuestionError } from '../../src/runs/service.js';
import { CronError, validateCron } from '../../src/scheduler/cron.js';
import { ConflictError, InvalidCursorError, JobLimitError, NotFoundError } from '../../src/store/store.js';
import { PAGE_STATUS } from '../../src/ui/errors.js';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

describe('error codes and their tables', () => {
  it('lists each code once', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    for (const code of ERROR_CODES) expect(code).toMatch(/^[a-z][a-z0-9_]*$/);
  });

  it.each([
    ['the API', API_STATUS],
    ['the UI', PAGE_STATUS],
  ])('%s has a status for every code and for nothing else', (_surface, table) => {
    expect(Object.keys(table).sort()).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) {
      const status = table[code];
      // A refusal is the caller's to mend: a 4xx, never a success or a server error.
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(500);
    }
  });

  it('keeps the statuses clients already see', () => {
    expect(API_STATUS).toMatchObject({
      not_found: 404,
      conflict: 409,
      stale: 409,
      expired: 410,
      sha256_mismatch: 409,
      self_approval: 403,
      forbidden: 403,
      already_approved: 409,
      not_pending: 409,
      invalid_answers: 422,
      invalid_cron: 422,
      bad_cursor: 400,
      capped: 429,
      managed_by_trigger: 409,
    });
  });
});

describe('the domain error family', () => {
  it('carries a code and a message, and no HTTP status', () => {
    const errors: [DomainError, string][] = [
      [new DecisionError('expired', 'plan pln_1 expired'), 'expired'],
      [new QuestionError('invalid_answers', 'answer every question'), 'invalid_answers'],
      [new DeliverRequestError('conflict', 'plan pln_1 is delivered already'), 'conflict'],
      [new NotFoundError('plan pln_1 not found'), 'not_found'],
      [new ConflictError('session ses_1 is closed'), 'conflict'],
      [new JobLimitError(3), 'conflict'],
      [new InvalidCursorError(), 'bad_cursor'],
      [new CronError('cron: bad'), 'invalid_cron'],
    ];
    for (const [err, code] of errors) {
      expect(err).toBeInstanceOf(DomainError);
      expect(err.code).toBe(code);
      expect(err.message).not.toBe('');
      expect(err).not.toHaveProperty('status');
    }
    expect(new JobLimitError(3)).toBeInstanceOf(ConflictError);
    expect(new JobLimitError(3).message).toBe('session already has 3 jobs, the most a session may hold');
  });

  it('is what the scheduler throws for an unusable cron expression', () => {
    let thrown: unknown;
    try {
      validateCron('61 * * * *', 'UTC', 0);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(CronError);
    expect(thrown).toMatchObject({ code: 'invalid_cron', name: 'CronError' });
  });

  it('domain code names no HTTP status type', () => {
    const folders = ['domain', 'plans', 'triggers', 'delivery', 'runs', 'scheduler', 'store'];
    const offenders: string[] = [];
    for (const folder of folders) {
      for (const file of readdirSync(join(SRC, folder), { recursive: true, encoding: 'utf8' })) {
        if (!file.endsWith('.ts')) continue;
        const text = readFileSync(join(SRC, folder, file), 'utf8');
        if (/from 'hono|StatusCode\b/.test(text)) offenders.push(`${folder}/${file}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
