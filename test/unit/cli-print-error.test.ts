import { describe, expect, it } from 'vitest';
import { reportError } from '../../src/cli/print-error.js';
import { optionsError, parseError, TsbmError, UnreachableError } from '../../src/errors.js';
import { Redactor } from '../../src/output/redact.js';

function report(err: unknown, verbosity = 0) {
  const redactor = new Redactor();
  redactor.add('pa55word-xyz');
  let text = '';
  const code = reportError(err, { verbosity, redactor, write: (t) => (text += t) });
  return { code, text };
}

describe('CLI error report', () => {
  it('prints a TsbmError on one line with position, hint and exit code', () => {
    expect(report(parseError('bad thing\nhappened', { file: 'p.yml', line: 3, col: 5 }, 'fix it'))).toEqual({
      code: 4,
      text: 'tsbm: error: p.yml:3:5: bad thing happened (fix it)\n',
    });
    expect(report(optionsError('--forks must be positive')).code).toBe(5);
    expect(report(new UnreachableError('node1', 'connection refused')).text).toBe('tsbm: error: [node1] connection refused\n');
    expect(report(new TsbmError('runtime', 'boom', { host: 'n', task: 'Power off' }))).toEqual({
      code: 1,
      text: 'tsbm: error: [n] task "Power off": boom\n',
    });
  });

  it('masks secrets in every form of error', () => {
    expect(report(new TsbmError('runtime', 'login with pa55word-xyz refused')).text).not.toContain('pa55word-xyz');
    const unexpected = report(new Error('pa55word-xyz leaked'), 3);
    expect(unexpected.text).not.toContain('pa55word-xyz');
    expect(unexpected.code).toBe(250);
  });

  it('strips escape sequences that came from remote output', () => {
    expect(report(new TsbmError('runtime', 'stderr: \x1b[2Jgone\x07')).text).toBe('tsbm: error: stderr: gone\uFFFD\n');
  });

  it('shows a stack only for unexpected errors and only with -vvv', () => {
    const e = new Error('kaput');
    expect(report(e).text).toBe('tsbm: unexpected error: kaput\n');
    expect(report(e, 3).text).toMatch(/^tsbm: unexpected error: kaput\nError: kaput\n\s+at /);
    expect(report(new TsbmError('runtime', 'x'), 3).text).toBe('tsbm: error: x\n');
    expect(report('a string').text).toBe('tsbm: unexpected error: a string\n');
  });
});
