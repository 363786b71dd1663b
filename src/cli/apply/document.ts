import { parseDocument, stringify } from 'yaml';
import type { z } from 'zod';
import { type ApplyDocument, applyDocumentSchema } from '../../http/contract/index.js';
import { closest } from '../commands/args.js';

// `drydock apply`'s file read and `drydock export`'s written: YAML, checked against the document's zod schema
// (src/http/contract/apply.ts). A mistake is said with where it is (`sessions[0].jobs[1]`), an unknown key
// with the closest known one.

/** The file does not parse or does not fit the schema: every problem, one line each. */
export class DocumentError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file}: ${problems.length === 1 ? problems[0] : `\n  ${problems.join('\n  ')}`}`);
  }
}

export function parseApplyDocument(text: string, file: string): ApplyDocument {
  const yaml = parseDocument(text, { prettyErrors: true });
  if (yaml.errors.length)
    throw new DocumentError(
      file,
      yaml.errors.map((e) => e.message.split('\n')[0]!),
    );
  const parsed = applyDocumentSchema.safeParse(yaml.toJS() ?? {});
  if (parsed.success) return parsed.data;
  throw new DocumentError(file, parsed.error.issues.map(describeIssue));
}

/** The document as YAML, the way `drydock export` writes it. */
export function writeApplyDocument(doc: unknown): string {
  return stringify(doc, { lineWidth: 0 });
}

type Issue = z.core.$ZodIssue;

function describeIssue(issue: Issue): string {
  const at = pathText(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const known = keysAt(issue.path);
    return issue.keys
      .map((key) => {
        const near = closest(key, known);
        return `${at ? `${at}.` : ''}${key}: unknown key${near ? `; did you mean "${near}"?` : ` (known: ${known.join(', ')})`}`;
      })
      .join('\n  ');
  }
  return `${at || '(top)'}: ${issue.message}`;
}

/** `sessions[0].jobs[1].cron` */
export function pathText(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
}

interface Def {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  in?: z.ZodType;
}

const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The keys the schema knows for the object at `path` (for "did you mean"). */
function keysAt(path: readonly PropertyKey[]): string[] {
  let schema: z.ZodType | undefined = applyDocumentSchema;
  for (const step of [...path, null]) {
    // Through the wrappers to the object or list beneath.
    let def = defOf(schema);
    while (def.innerType || def.in) {
      schema = (def.innerType ?? def.in)!;
      def = defOf(schema);
    }
    if (step === null) return def.shape ? Object.keys(def.shape) : [];
    schema = typeof step === 'number' ? def.element : def.shape?.[String(step)];
    if (!schema) return [];
  }
  return [];
}
