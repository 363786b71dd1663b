import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { DomainError, ERROR_CODES } from '../../src/domain/errors.js';
import { API_STATUS, errorResponse, HttpError } from '../../src/http/errors.js';
import { silentLogger } from '../../src/logger.js';
import { DecisionError } from '../../src/plans/decisions.js';
import { InvalidCursorError, NotFoundError } from '../../src/store/store.js';

/** An app whose one route throws what it is given, answered by the API's error handler. */
function throwing(err: unknown) {
  const app = new Hono();
  app.onError((e, c) => errorResponse(e, c, silentLogger()));
  app.get('/x', () => {
    throw err;
  });
  return app;
}

describe("the API's error table in onError", () => {
  it.each(ERROR_CODES.map((code) => [code]))(
    'answers a DomainError %s with its status and the one error body',
    async (code) => {
      const res = await throwing(new DomainError(code, `refused: ${code}`)).request('/x');
      expect(res.status).toBe(API_STATUS[code]);
      expect(await res.json()).toEqual({ error: { code, message: `refused: ${code}` } });
    },
  );

  it('answers the subclasses by their code', async () => {
    const self = await throwing(new DecisionError('self_approval', 'alice requested this plan')).request(
      '/x',
    );
    expect(self.status).toBe(403);
    expect(await self.json()).toEqual({
      error: { code: 'self_approval', message: 'alice requested this plan' },
    });

    const missing = await throwing(new NotFoundError('plan pln_1 not found')).request('/x');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'not_found' } });

    const cursor = await throwing(new InvalidCursorError()).request('/x');
    expect(cursor.status).toBe(400);
    expect(await cursor.json()).toEqual({
      error: { code: 'bad_cursor', message: 'cursor is not one this server issued' },
    });
  });

  it('keeps HttpError as it is and answers anything else as a bare 500', async () => {
    const http = await throwing(new HttpError(503, 'unavailable', 'delivery is not running')).request('/x');
    expect(http.status).toBe(503);
    expect(await http.json()).toMatchObject({ error: { code: 'unavailable' } });

    const unknown = await throwing(new Error('secret internals')).request('/x');
    expect(unknown.status).toBe(500);
    expect(await unknown.json()).toEqual({ error: { code: 'internal', message: 'internal error' } });
  });
});
