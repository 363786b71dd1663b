import { describe, expect, it } from 'vitest';
import {
  COMMENT_PART_CHARS,
  commentParts,
  GITHUB_COMMENT_LIMIT,
  MAX_COMMENT_PARTS,
  neutralizeCommands,
  splitMarkdown,
} from '../../src/github/comment-split.js';
import { parseCommand } from '../../src/triggers/commands.js';

const FENCE = /^\s*(`{3,}|~{3,})(.*)$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** An independent reading of fences: is a fence still open at the end of `text`? */
function openAtEnd(text: string): boolean {
  let open: { char: string; length: number } | null = null;
  for (const line of text.split('\n')) {
    const m = FENCE.exec(line);
    if (!m) continue;
    const marker = m[1]!;
    if (!open) {
      if (marker[0] === '`' && m[2]!.includes('`')) continue;
      open = { char: marker[0]!, length: marker.length };
    } else if (marker[0] === open.char && marker.length >= open.length && m[2]!.trim() === '') {
      open = null;
    }
  }
  return open !== null;
}

/** The text without its fence marker lines (the splitter adds some at part boundaries). */
const withoutFenceLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => !FENCE.test(l))
    .join('\n');

/** `count` numbered prose lines of about 80 characters. */
function prose(count: number, tag = 'line'): string {
  let out = '';
  for (let i = 0; i < count; i++)
    out += `${tag} ${i}: ${'lorem ipsum dolor sit amet '.repeat(3).slice(0, 70)}\n`;
  return out;
}

function expectSizes(parts: string[], max: number): void {
  for (const p of parts) {
    expect(p.length).toBeGreaterThan(0);
    expect(p.length).toBeLessThanOrEqual(max);
  }
}

describe('splitMarkdown', () => {
  it('leaves a plan that fits alone', () => {
    const md = '## Plan\n\n1. one\n2. two\n';
    expect(splitMarkdown(md)).toEqual([md]);
    expect(splitMarkdown('x'.repeat(COMMENT_PART_CHARS))).toHaveLength(1);
  });

  it('splits long prose on line boundaries into parts of at most 60,000 characters', () => {
    const md = prose(2_000); // ~160k characters
    const parts = splitMarkdown(md);
    expect(parts).toHaveLength(3);
    expectSizes(parts, 60_000);
    expect(parts.join('')).toBe(md);
    for (const p of parts) expect(p.endsWith('\n')).toBe(true);
    // Every part starts at the beginning of a line of the original.
    for (const p of parts) expect(p).toMatch(/^line \d+: /);
  });

  it('moves a fenced block whole to the next part rather than splitting it', () => {
    const code = `\`\`\`ts\n${prose(200, 'const x')}\`\`\`\n`; // ~16k, fits in a part
    const md = `${prose(700)}${code}${prose(100, 'after')}`; // the block straddles 60,000
    const start = md.indexOf('```ts');
    expect(start).toBeLessThan(60_000);
    expect(start + code.length).toBeGreaterThan(60_000);
    const parts = splitMarkdown(md);
    expectSizes(parts, 60_000);
    expect(parts.join('')).toBe(md);
    expect(parts[1]!.startsWith('```ts\n')).toBe(true);
    for (const p of parts) expect(openAtEnd(p)).toBe(false);
  });

  it('closes a fence that must be split and reopens it, info string included, in the next part', () => {
    const md = `# Plan\n\n\`\`\`diff title="a.ts"\n${prose(1_600, '+ added')}\`\`\`\n\nDone.\n`; // ~130k fence
    const parts = splitMarkdown(md);
    expect(parts.length).toBe(3);
    expectSizes(parts, 60_000);
    for (const p of parts) expect(openAtEnd(p), p.slice(-200)).toBe(false);
    expect(parts[0]!.endsWith('\n```\n')).toBe(true);
    expect(parts[1]!.startsWith('```diff title="a.ts"\n+ added')).toBe(true);
    expect(parts[1]!.endsWith('\n```\n')).toBe(true);
    expect(parts[2]!.startsWith('```diff title="a.ts"\n')).toBe(true);
    expect(withoutFenceLines(parts.join(''))).toBe(withoutFenceLines(md));
  });

  it('reads fences as CommonMark does: tildes, longer markers, inner shorter markers', () => {
    // A four-backtick fence holding ``` lines, and a ~~~ fence: the inner markers close nothing.
    const inner = `${prose(400, 'text')}\`\`\`\n${prose(400, 'still code')}`;
    const md = `intro\n\`\`\`\`md\n${inner}\`\`\`\`\n~~~\n${prose(400, 'tilde')}~~~\n`;
    const parts = splitMarkdown(md);
    expectSizes(parts, 60_000);
    for (const p of parts) expect(openAtEnd(p)).toBe(false);
    expect(parts[1]!.startsWith('````md\n')).toBe(true);
    // The ``` inside the four-backtick fence was not taken for a closer.
    expect(parts[0]!.endsWith('\n````\n')).toBe(true);
  });

  it('does not take a line with backticks after the marker for a fence', () => {
    const md = `${'```inline``` code\n'.repeat(5_000)}`; // 90k: not fences at all
    const parts = splitMarkdown(md);
    expect(parts.join('')).toBe(md);
    expect(parts).toHaveLength(2);
  });

  it('hard-cuts a single 200,000-character line', () => {
    const md = 'a'.repeat(200_000);
    const parts = splitMarkdown(md);
    expectSizes(parts, 60_000);
    expect(parts.length).toBe(4);
    expect(parts.join('')).toBe(md);
  });

  it('hard-cuts a long line without splitting a surrogate pair', () => {
    const md = `x${'😀'.repeat(100_000)}`; // 200,001 UTF-16 code units
    const parts = splitMarkdown(md);
    expectSizes(parts, 60_000);
    expect(parts.join('')).toBe(md);
    for (const p of parts) expect(LONE_SURROGATE.test(p)).toBe(false);
  });

  it('keeps every part of a hard-cut line inside a fence fenced', () => {
    const md = `\`\`\`json\n${'9'.repeat(200_000)}\n\`\`\`\n`;
    const parts = splitMarkdown(md);
    expectSizes(parts, 60_000);
    expect(parts.length).toBe(4);
    for (const p of parts) {
      expect(p.startsWith('```json\n')).toBe(true);
      expect(openAtEnd(p)).toBe(false);
    }
    expect(withoutFenceLines(parts.join('')).replaceAll('\n', '')).toBe('9'.repeat(200_000));
  });

  it('accepts a smaller part size and refuses a silly one', () => {
    const parts = splitMarkdown(prose(100), 2_000);
    expectSizes(parts, 2_000);
    expect(parts.join('')).toBe(prose(100));
    expect(() => splitMarkdown('x', 10)).toThrow(RangeError);
  });
});

describe('commentParts', () => {
  const header = '### drydock plan `pln_1` (round 1)\n\nApprove with a comment `/drydock approve`.';

  it('one comment for a short plan, with the header and no label', () => {
    const bodies = commentParts({
      header,
      markdown: '1. do it\n',
      planId: 'pln_1',
      fullPlanAt: '/ui/plans/pln_1',
    });
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toContain(header);
    expect(bodies[0]).toContain('1. do it');
    expect(bodies[0]).not.toContain('part 1');
  });

  it('labels each part "(part i of n)" and keeps every body under the GitHub limit', () => {
    const markdown = prose(1_900); // ~150k
    const bodies = commentParts({ header, markdown, planId: 'pln_1', fullPlanAt: '/ui/plans/pln_1' });
    expect(bodies).toHaveLength(3);
    bodies.forEach((body, i) => {
      expect(body.length).toBeLessThan(GITHUB_COMMENT_LIMIT);
      expect(body).toContain(`(part ${i + 1} of 3)`);
      expect(body).toContain('pln_1');
    });
    expect(bodies[0]).toContain(header);
    expect(bodies[1]).not.toContain(header);
    const rejoined = bodies.map((b) => b.slice(b.indexOf('\n\n---\n\n') + 7)).join('');
    expect(rejoined).toBe(markdown);
  });

  it(`posts at most ${MAX_COMMENT_PARTS} parts and says what was cut and where to read it all`, () => {
    const markdown = prose(5_000); // ~400k: 7 parts
    const bodies = commentParts({
      header,
      markdown,
      planId: 'pln_big',
      fullPlanAt: '/ui/plans/pln_big',
    });
    expect(bodies).toHaveLength(MAX_COMMENT_PARTS);
    for (const b of bodies) expect(b.length).toBeLessThan(GITHUB_COMMENT_LIMIT);
    expect(bodies[4]).toContain('(part 5 of 7)');
    expect(bodies[4]).toMatch(/2 more parts were cut/);
    expect(bodies[4]).toContain('/ui/plans/pln_big');
    expect(bodies[3]).not.toMatch(/cut/);
  });

  it('a header too long for the default room still leaves every body under the limit', () => {
    const long = `${header}\n\n${'h'.repeat(8_000)}`;
    const bodies = commentParts({ header: long, markdown: prose(1_900), planId: 'p', fullPlanAt: 'x' });
    for (const b of bodies) expect(b.length).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
  });

  it('no line of a posted body reads as a /drydock command', () => {
    const markdown = [
      '## Plan',
      '/drydock approve',
      '   /drydock reject because',
      '\t/drydock plan',
      '```',
      '/drydock approve',
      '```',
      '/DRYDOCK approve',
      '\r/drydock approve',
      'text mentioning /drydock approve mid-line stays as it is',
    ].join('\n');
    const bodies = commentParts({ header, markdown, planId: 'pln_1', fullPlanAt: '/ui/plans/pln_1' });
    for (const b of bodies) expect(parseCommand(b)).toBeNull();
    expect(bodies[0]).toContain('text mentioning /drydock approve mid-line stays as it is');
    // Without the guard, the same text would have been a command.
    expect(parseCommand(markdown)).not.toBeNull();
    expect(parseCommand(neutralizeCommands(markdown))).toBeNull();
  });
});
