import { expect, it } from 'vitest';
import { COMMIT_SUBJECT, LIST_TITLE, NOTIFICATION_TITLE, planTitle } from '../../src/domain/plan-title.js';

const long = `# ${'x'.repeat(300)}\n\nsteps`;

it('a commit subject is the first line without heading marks, at most 72 characters ending in "..."', () => {
  expect(planTitle('\n\n## Add a  greeting\nsteps')).toBe('Add a  greeting');
  expect(planTitle(long)).toBe(`${'x'.repeat(69)}...`);
  expect(planTitle(' \n\n')).toBe('drydock plan');
  expect(planTitle('', COMMIT_SUBJECT)).toBe('drydock plan');
});

it("the API's list title keeps up to 200 characters, cut without a mark, and is empty for no text", () => {
  expect(planTitle(long, LIST_TITLE)).toBe('x'.repeat(200));
  expect(planTitle('', LIST_TITLE)).toBe('');
});

it('a notification title is one line of at most 120 characters, indented headings included', () => {
  expect(planTitle(long, NOTIFICATION_TITLE)).toBe(`${'x'.repeat(119)}…`);
  expect(planTitle('  ##  Fix\tthe   build', NOTIFICATION_TITLE)).toBe('Fix the build');
  // The other shapes keep an indented line as it is, as they always did.
  expect(planTitle('  ##  Fix\tthe   build', LIST_TITLE)).toBe('##  Fix\tthe   build');
});
