import type { OverlapPolicy } from '../domain/types.js';
import { HttpError } from './errors.js';

// A job's or schedule trigger's overlap and jitter, from the API's names to the services'. `approximate` is
// older than `jitter` and stays as its alias: both may be given only if they agree.

interface ScheduleBody {
  approximate?: boolean | undefined;
  overlap?: OverlapPolicy | undefined;
  jitter?: { max_seconds?: number | null | undefined; approximate?: boolean | undefined } | undefined;
}

export function scheduleFields(body: ScheduleBody): {
  approximate: boolean | undefined;
  overlap: OverlapPolicy | undefined;
  jitterMaxSeconds: number | null | undefined;
} {
  const alias = body.jitter?.approximate;
  if (body.approximate !== undefined && alias !== undefined && body.approximate !== alias) {
    throw new HttpError(
      422,
      'invalid_request',
      'approximate and jitter.approximate disagree; give one of them (approximate is its older name)',
    );
  }
  return {
    approximate: body.approximate ?? alias,
    overlap: body.overlap,
    jitterMaxSeconds: body.jitter?.max_seconds,
  };
}
