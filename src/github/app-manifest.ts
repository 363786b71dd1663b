// What drydock asks of GitHub: the permissions of its GitHub App (or of a fine-grained token) and the webhook
// events it subscribes to. The one list: github-app.json (the App manifest at the repository root), docs/github.md
// ("Setting up GitHub") and tests/github/app-manifest.test.ts are held to it, and the test checks `handled`
// against what the webhook intake does with each event today.
//
// Facts from GitHub's documentation:
// - A manifest's `default_permissions` maps a permission's name to `read` or `write`; `default_events` lists
//   webhook event names; `hook_attributes: {url, active}` is the webhook
//   (https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest).
//   The permission names are those of the REST `app-permissions` schema (contents, pull_requests, ...).
// - An App can subscribe to an event only with the permission that event names, at least `read`
//   (https://docs.github.com/en/webhooks/webhook-events-and-payloads, each event's "To subscribe to this event,
//   a GitHub App must have at least read-level access for ..."): pull_request needs Pull requests; issues and
//   issue_comment, Issues; check_suite and check_run, Checks (their `requested`, `rerequested` and
//   `requested_action` actions need write); workflow_run, Actions; release and push, Contents;
//   deployment_status, Deployments. Hence `actions` and `deployments` (read) below, which nothing else needs.
// - Metadata (read) is granted to every App whether asked or not.

/** An App permission's access level. */
export type GithubAccess = 'read' | 'write';

/** The permissions of drydock's GitHub App, by GitHub's name, with what each is for. */
export const GITHUB_APP_PERMISSIONS = {
  // Pushing the branch of an executed plan (delivery).
  contents: 'write',
  // Reading pull requests, opening the pull request of a delivery.
  pull_requests: 'write',
  // Comments on pull requests (plans, delivery links): GitHub keeps them as issue comments.
  issues: 'write',
  // The "drydock plan" check run with Approve and Reject buttons (src/github/check-run.ts); reading a failed check
  // suite's check runs; receiving check_suite and check_run (requested_action needs write).
  checks: 'write',
  // Receiving workflow_run, listing a failed workflow run's jobs.
  actions: 'read',
  // Only to receive deployment_status.
  deployments: 'read',
  // Every App has it.
  metadata: 'read',
} as const satisfies Record<string, GithubAccess>;

export type GithubPermissionName = keyof typeof GITHUB_APP_PERMISSIONS;

/**
 * A webhook event drydock subscribes to: the permission an App needs to receive it (see above), and whether
 * the webhook intake acts on it today (false: it is recorded as `ignored`; docs/github.md says "coming").
 */
export interface GithubEvent {
  permission: GithubPermissionName;
  handled: boolean;
}

/** The webhook events drydock subscribes to, by GitHub's name. */
export const GITHUB_APP_EVENTS = {
  pull_request: { permission: 'pull_requests', handled: true },
  issue_comment: { permission: 'issues', handled: true },
  issues: { permission: 'issues', handled: true },
  check_suite: { permission: 'checks', handled: true },
  check_run: { permission: 'checks', handled: true },
  workflow_run: { permission: 'actions', handled: true },
  release: { permission: 'contents', handled: true },
  push: { permission: 'contents', handled: true },
  deployment_status: { permission: 'deployments', handled: true },
} as const satisfies Record<string, GithubEvent>;

export type GithubEventName = keyof typeof GITHUB_APP_EVENTS;
