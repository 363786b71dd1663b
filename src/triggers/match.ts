import type { Trigger } from '../domain/types.js';
import type { PullRequestContext } from './fire-context.js';

/** Why a github trigger does not fire for a pull request event, or null when it does. */
export function mismatch(trigger: Trigger, ctx: PullRequestContext): string | null {
  const [eventName] = ctx.event.split('.');
  if (!trigger.events.includes(ctx.event) && !trigger.events.includes(eventName!))
    return `event ${ctx.event} not subscribed`;
  const f = trigger.filters;
  const lower = (xs: string[] | undefined) => xs?.map((x) => x.toLowerCase());
  if (f.repositories?.length && !lower(f.repositories)!.includes(ctx.repository.toLowerCase())) {
    return `repository ${ctx.repository} not in filter`;
  }
  if (f.base_branches?.length && !f.base_branches.includes(ctx.baseRef))
    return `base branch ${ctx.baseRef} not in filter`;
  if (f.labels?.length && !ctx.labels.some((l) => f.labels!.includes(l))) return 'no matching label';
  if (f.authors?.length && !lower(f.authors)!.includes(ctx.author.toLowerCase()))
    return `author ${ctx.author} not in filter`;
  if (f.draft !== undefined && f.draft !== ctx.draft) return ctx.draft ? 'draft pull request' : 'not a draft';
  return null;
}
