import { readFileSync, writeFileSync } from 'node:fs';
import { type ApplyDocument, applyJsonSchema } from '../../http/contract/index.js';
import { DocumentError, parseApplyDocument, writeApplyDocument } from '../apply/document.js';
import { exportDocument } from '../apply/export.js';
import { type ApplyPlan, type Change, planApply, shown } from '../apply/plan.js';
import { type Carried, carryOut, readCurrent } from '../apply/remote.js';
import { flag, helpLine, RemoteUsageError, required, str } from './args.js';
import { runStandalone, type Subcommand } from './group.js';
import { clean, out } from './output.js';

// drydock apply -f FILE [--dry-run] [--prune] and drydock export [-o FILE]: sessions, their jobs and triggers
// as code (src/cli/apply/), over the API like every remote command.

/** Exit code of `apply --dry-run --exit-code` when the file would change something. */
export const CHANGES_PENDING = 3;

const APPLY_HELP = `Reconciles the daemon with a YAML file, like "kubectl apply": sessions with their jobs, and
triggers, each found by its name. Prints what it changes, one line each:
  + trigger pr-review (github)
  ~ job nightly/review: cron "0 9 * * *" → "0 9 * * 1-5"
  - trigger old (prune)
A field the file gives is set; a field it leaves out stays as the daemon has it. A second apply of the same
file changes nothing ("no changes") and sends no write request. A generic trigger's token is printed once,
when apply creates the trigger, labelled "token:"; never in the diff, never by export. Sessions a trigger
made, sessions made without a name and jobs without a name are left alone ("unmanaged"). A session cannot
change once made: a file that changes one's workspace or defaults is refused, as is a name two objects share
(both ids are named); nothing is changed then.

${helpLine('-f, --file FILE', 'the file (drydock.yaml; - for standard input)')}
${helpLine('--dry-run', 'print what would change and change nothing')}
${helpLine('--exit-code', `with --dry-run: exit ${CHANGES_PENDING} when something would change (0 when nothing)`)}
${helpLine('--prune', 'also remove the named objects the file leaves out: close sessions (their jobs')}
                        go with them), delete jobs and triggers
${helpLine('--print-schema', "print the file's JSON Schema and exit (no daemon needed; the same as")}
                        schemas/drydock.schema.json and GET /v1/schema/apply)`;

const EXPORT_HELP = `Writes the daemon's sessions (open, named, not a trigger's) with their named jobs, and its
triggers, in the format "drydock apply" reads: export, then apply on another daemon, makes the same objects.
No secret is written: a generic trigger's token stays with the daemon that made it.

${helpLine('-o, --output FILE', 'write to FILE instead of standard output')}`;

export const applyCommand: Subcommand = {
  synopsis: '-f FILE [--dry-run [--exit-code]] [--prune] | --print-schema',
  help: APPLY_HELP,
  options: {
    file: { type: 'string', short: 'f' },
    'dry-run': { type: 'boolean' },
    'exit-code': { type: 'boolean' },
    prune: { type: 'boolean' },
    'print-schema': { type: 'boolean' },
  },
  positionals: [],
  async run({ client, values }) {
    const file = required(values, 'file', 'the YAML file to apply (drydock.yaml)');
    const dryRun = flag(values, 'dry-run');
    if (flag(values, 'exit-code') && !dryRun) throw new RemoteUsageError('--exit-code goes with --dry-run');
    const doc = readDocument(file);
    if (!doc) return 2;
    const plan = planApply(doc, await readCurrent(client), flag(values, 'prune'));
    for (const note of plan.unmanaged) out(`  ${clean(note)}`);
    if (plan.problems.length) {
      process.stderr.write(
        `drydock: apply: nothing changed:\n${plan.problems.map((p) => `  ${clean(p)}\n`).join('')}`,
      );
      return 1;
    }
    if (plan.changes.length === 0) {
      out('no changes');
      return 0;
    }
    if (dryRun) return dryRunReport(plan, flag(values, 'exit-code'));
    await carryOut(client, plan.changes, (change, carried) => printCarried(change, carried));
    out(`${plan.changes.length} change(s) applied`);
    return 0;
  },
};

/** The file read and checked; null (after saying why, every problem one line) when it cannot be used. */
function readDocument(file: string): ApplyDocument | null {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    process.stderr.write(`drydock: apply: cannot read ${file}: ${(err as Error).message}\n`);
    return null;
  }
  try {
    return parseApplyDocument(text, file);
  } catch (err) {
    if (!(err instanceof DocumentError)) throw err;
    process.stderr.write(`drydock: apply: ${clean(err.message)}\n`);
    return null;
  }
}

function dryRunReport(plan: ApplyPlan, exitCode: boolean): number {
  for (const change of plan.changes) out(clean(diffLine(change)));
  out(`dry run: ${plan.changes.length} change(s) would be made; nothing was changed`);
  return exitCode ? CHANGES_PENDING : 0;
}

function printCarried(change: Change, carried: Carried): void {
  out(clean(diffLine(change)));
  if (carried.token) {
    out(
      `  token: ${carried.token.token}\n` +
        `  (the token of trigger ${carried.token.trigger}, ${carried.token.id}: shown only this once; replace ` +
        `it with "drydock triggers update ${carried.token.id} --rotate-token")`,
    );
  }
}

/** The line of the diff that says a change; never a secret (no request carries one). */
export function diffLine(c: Change): string {
  switch (c.op) {
    case 'create_session':
      return `+ session ${c.session.name} (${c.session.workspace})`;
    case 'close_session':
      return `- session ${c.session.name} (prune: closed${c.jobs ? `, with its ${c.jobs} job(s)` : ''})`;
    case 'create_job':
      return `+ job ${c.session}/${c.job.name} (${c.job.cron})`;
    case 'update_job':
      return `~ job ${c.session}/${c.job.name}: ${fieldsText(c.fields)}`;
    case 'delete_job':
      return `- job ${c.session}/${c.job.name} (prune)`;
    case 'create_trigger':
      return `+ trigger ${c.trigger.name} (${c.trigger.kind})`;
    case 'update_trigger':
      return `~ trigger ${c.trigger.name}: ${fieldsText(c.fields)}`;
    case 'delete_trigger':
      return `- trigger ${c.trigger.name} (prune)`;
  }
}

const fieldsText = (fields: { field: string; from: unknown; to: unknown }[]) =>
  fields.map((f) => `${f.field} ${shown(f.from)} → ${shown(f.to)}`).join('; ');

export const exportCommand: Subcommand = {
  synopsis: '[-o FILE]',
  help: EXPORT_HELP,
  options: { output: { type: 'string', short: 'o' } },
  positionals: [],
  async run({ client, values }) {
    const yaml = writeApplyDocument(exportDocument(await readCurrent(client)));
    const file = str(values, 'output');
    if (file) writeFileSync(file, yaml);
    else process.stdout.write(yaml);
    return 0;
  },
};

/** The published JSON Schema's text (schemas/drydock.schema.json holds exactly this). */
export const applySchemaText = (): string => `${JSON.stringify(applyJsonSchema(), null, 2)}\n`;

/** `drydock apply ...`; `--print-schema` needs no daemon and no token. */
export async function applyMain(argv: string[]): Promise<number> {
  if (argv.includes('--print-schema') && !argv.includes('--help') && !argv.includes('-h')) {
    process.stdout.write(applySchemaText());
    return 0;
  }
  return runStandalone('apply', applyCommand, argv);
}

export const exportMain = (argv: string[]): Promise<number> => runStandalone('export', exportCommand, argv);
