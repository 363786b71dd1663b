import { type CallOptions, call, type Reply } from './http.js';

// What the load talks to: one daemon, or the replicas behind a load balancer. The balancer sends each request
// to the next replica in turn; one that refuses the connection (killed, not yet restarted) is skipped for a
// while and the request goes to the next, as a load balancer's passive health check does. Only a refused
// connection is tried elsewhere: the request never reached a daemon. A request cut off mid-way (a SIGKILL
// while it ran) may have been carried out, so it is answered as the wire error it is, like a load balancer
// that does not retry non-idempotent requests; the load decides (deliveries are sent again with the same id).

export interface Target {
  call(method: string, path: string, o?: CallOptions): Promise<Reply>;
}

/** The one daemon at `url`. */
export function direct(url: string): Target {
  return { call: (method, path, o) => call(url, method, path, o) };
}

/** How long a replica that refused a connection is left out of the rotation. */
const SKIP_MS = 2_000;

export class Balancer implements Target {
  /** Requests answered (any status) by each replica, by its URL's index. */
  readonly answered: number[];
  /** Requests sent to the next replica because one refused the connection. */
  failovers = 0;
  private next = 0;
  private readonly skipUntil: number[];

  constructor(private readonly urls: readonly string[]) {
    this.answered = urls.map(() => 0);
    this.skipUntil = urls.map(() => 0);
  }

  async call(method: string, path: string, o?: CallOptions): Promise<Reply> {
    const n = this.urls.length;
    const first = this.next;
    this.next = (this.next + 1) % n;
    // The replicas in turn from `first`, those recently refusing last.
    const now = Date.now();
    const order = Array.from({ length: n }, (_, k) => (first + k) % n).sort(
      (a, b) => Number(this.skipUntil[a]! > now) - Number(this.skipUntil[b]! > now),
    );
    let reply: Reply = { ok: false, error: 'no replica' };
    for (const [k, i] of order.entries()) {
      reply = await call(this.urls[i]!, method, path, o);
      if (reply.ok || reply.error !== 'ECONNREFUSED') {
        if (reply.ok) this.answered[i]! += 1;
        return reply;
      }
      this.skipUntil[i] = Date.now() + SKIP_MS;
      if (k < n - 1) this.failovers += 1;
    }
    return reply;
  }
}
