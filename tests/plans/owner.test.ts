import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

// One owner of plan status: the store's plan-status writers are called from src/plans/lifecycle.ts only (and
// are, of course, defined in src/store/). Read from the sources, with comments blanked out, so a comment
// that names a writer neither trips the test nor hides a call.

const SRC = join(import.meta.dirname, '..', '..', 'src');
const WRITERS = ['transitionPlan', 'expirePlans', 'supersedePlans', 'createPlan', 'decidePlan'];
const OWNER = 'plans/lifecycle.ts';
const IMPLEMENTS = 'store/';
/** The store as a run's executor sees it: it passes each call on with the run's fence, and decides nothing. */
const FORWARDS = 'runs/holding.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The source with every comment replaced by spaces (line breaks kept, so lines still count). Strings,
 * template literals (their `${…}` parts are code) and regular expression literals are stepped over, so a
 * `//` inside them is no comment. Everything else is left as written: a writer's name in code or in a
 * string (`store['createPlan']`) is still found.
 */
function withoutComments(text: string): string {
  const out = text.split('');
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  // Open template literals and, for each, how deep in braces its current `${…}` is.
  const templates: number[] = [];
  let i = 0;
  let last = ''; // the last significant character of code, to tell a regex from a division
  const skipQuoted = (quote: string) => {
    i += 1;
    while (i < text.length && text[i] !== quote && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
    i += 1;
  };
  /** Steps through a template's text; stops after its closing backtick or after a `${`. */
  const skipTemplateText = () => {
    while (i < text.length) {
      if (text[i] === '\\') i += 2;
      else if (text[i] === '`') {
        i += 1;
        return;
      } else if (text[i] === '$' && text[i + 1] === '{') {
        i += 2;
        templates.push(0);
        return;
      } else i += 1;
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === "'" || c === '"') {
      skipQuoted(c);
      last = c;
    } else if (c === '`') {
      i += 1;
      skipTemplateText();
      last = '`';
    } else if (c === '{' && templates.length) {
      templates[templates.length - 1]! += 1;
      i += 1;
      last = c;
    } else if (c === '}' && templates.length && templates[templates.length - 1] === 0) {
      templates.pop();
      i += 1;
      skipTemplateText();
      last = '`';
    } else if (c === '}' && templates.length) {
      templates[templates.length - 1]! -= 1;
      i += 1;
      last = c;
    } else if (c === '/' && (last === '' || '(,=:[!&|?{};+-*%<>~^'.includes(last))) {
      // A regular expression literal (a division follows a value instead).
      i += 1;
      let inClass = false;
      while (i < text.length && text[i] !== '\n' && (inClass || text[i] !== '/')) {
        if (text[i] === '\\') i += 1;
        else if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
        i += 1;
      }
      i += 1;
      last = ')';
    } else {
      if (!/\s/.test(c)) last = /[\w$]/.test(c) ? 'a' : c;
      i += 1;
    }
  }
  return out.join('');
}

/** `file:line name` of every mention of a plan-status writer in the code of `text`. */
function writerMentions(file: string, text: string): string[] {
  const found: string[] = [];
  const pattern = new RegExp(`(?<![\\w$])(${WRITERS.join('|')})(?![\\w$])`, 'g');
  withoutComments(text)
    .split('\n')
    .forEach((line, n) => {
      for (const m of line.matchAll(pattern)) found.push(`${file}:${n + 1} ${m[1]}`);
    });
  return found;
}

const files = sources(SRC).map((path) => ({
  name: relative(SRC, path).split(sep).join('/'),
  text: readFileSync(path, 'utf8'),
}));

describe('plan status has one writer', () => {
  it('no file but the plan service calls the store’s plan-status writers', () => {
    const outside = files
      .filter((f) => f.name !== OWNER && f.name !== FORWARDS && !f.name.startsWith(IMPLEMENTS))
      .flatMap((f) => writerMentions(f.name, f.text));
    expect(outside).toEqual([]);
  });

  it('the plan service calls every one of them (the scan sees real calls)', () => {
    const owner = files.find((f) => f.name === OWNER);
    expect(owner, `${OWNER} exists`).toBeDefined();
    const called = new Set(writerMentions(OWNER, owner!.text).map((m) => m.split(' ')[1]));
    expect([...called].sort()).toEqual([...WRITERS].sort());
  });

  it('the scan ignores comments, sees calls and string keys, and is not fooled by // in strings or regexes', () => {
    const sample = [
      '// store.transitionPlan(id) in a line comment',
      '/* store.expirePlans(now) in a block comment */ const url = "http://x"; store.createPlan(p);',
      "const re = /a\\/\\/b/; store['supersedePlans'](s, d, now);",
      // A template literal whose placeholder holds a comment, then `//` in its text.
      [
        'const t = `$',
        '{a /* not code: transitionPlan */}//$',
        '{b}`; await this.deps.store.decidePlan(id, rule);',
      ].join(''),
      '/**',
      ' * transitionPlan, in a doc comment',
      ' */',
      'const ratio = a / b; // transitionPlan after a division',
      'const fn = store.transitionPlan;',
      'x.transitionPlanLater(); const expirePlansCount = 1;',
    ].join('\n');
    expect(writerMentions('sample.ts', sample)).toEqual([
      'sample.ts:2 createPlan',
      'sample.ts:3 supersedePlans',
      'sample.ts:4 decidePlan',
      'sample.ts:9 transitionPlan',
    ]);
  });

  it('runs/ knows nothing of plans/, and the run queue and the run service do not import each other both ways', () => {
    const imports = (name: string) =>
      [...withoutComments(files.find((f) => f.name === name)!.text).matchAll(/from '([^']+)'/g)].map(
        (m) => m[1]!,
      );
    const runs = files.filter((f) => f.name.startsWith('runs/'));
    expect(runs.length).toBeGreaterThan(0);
    for (const f of runs) {
      expect(
        imports(f.name).filter((spec) => spec.includes('/plans/')),
        f.name,
      ).toEqual([]);
    }
    const queueUsesService = imports('runs/queue.ts').includes('./service.js');
    const serviceUsesQueue = imports('runs/service.ts').includes('./queue.js');
    expect(queueUsesService && serviceUsesQueue).toBe(false);
  });
});
