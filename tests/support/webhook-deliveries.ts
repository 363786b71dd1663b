import { expect } from 'vitest';
import { waitFor } from './daemon.js';

type Api = (method: string, path: string) => Promise<{ status: number; body: any }>;

/** Waits until the inbox processed delivery `id` (its outcome is no longer `queued`); returns it. */
export async function processedWebhookDelivery(api: Api, id: string, ms = 10_000): Promise<any> {
  return waitFor(
    async () => {
      const r = await api('GET', `/v1/deliveries/${id}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.outcome === 'queued' ? undefined : r.body;
    },
    ms,
    `delivery ${id} to be processed`,
  );
}

/**
 * A webhook answer as the inbox settled it: for an answer `queued`, its outcome, detail, run_ids and subject
 * once processed, over the answer's fields; any other answer as it is.
 */
export async function settledAnswer(api: Api, status: number, answer: any): Promise<any> {
  if (status !== 202 || answer?.outcome !== 'queued') return answer;
  const d = await processedWebhookDelivery(api, answer.delivery_id);
  return { ...answer, outcome: d.outcome, detail: d.detail, run_ids: d.run_ids, subject: d.subject };
}
