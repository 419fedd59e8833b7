// Several argv commands in one round trip: every step gets its own exit status, stdout and
// stderr back, byte for byte, whatever the commands print; stdin reaches only the chosen step.
import { describe, expect, it } from 'vitest';
import { execSteps, splitStepsOutput, stepsScript } from '../../src/connection/exec-steps.js';
import { localConnection } from '../../src/connection/local.js';

const local = localConnection('ctl');

describe('execSteps on a real shell', () => {
  it('returns each step its own rc, stdout and stderr, with or without a final newline', async () => {
    const r = await execSteps(local, [
      ['printf', 'no newline'],
      ['sh', '-c', 'echo out; echo err >&2; exit 3'],
      ['printf', '%s\\n\\n', 'two newlines'],
      ['true'],
    ]);
    expect(r).toEqual([
      { rc: 0, stdout: 'no newline', stderr: '' },
      { rc: 3, stdout: 'out\n', stderr: 'err\n' },
      { rc: 0, stdout: 'two newlines\n\n', stderr: '' },
      { rc: 0, stdout: '', stderr: '' },
    ]);
  });

  it('keeps hostile arguments literal (quotes, newlines, $(), a marker-looking line)', async () => {
    const hostile = ["it's", 'a\nb', '$(touch /tmp/tsbm-pwned)', '`id`', '"; exit 9; "', '\n__tsbm_step_0 0\n'];
    const r = await execSteps(local, hostile.map((h) => ['printf', '%s', h]));
    expect(r.map((x) => x.stdout)).toEqual(hostile);
    expect(r.every((x) => x.rc === 0)).toBe(true);
  });

  it('a missing program is rc 127 for that step only', async () => {
    const r = await execSteps(local, [['tsbm-no-such-program'], ['echo', 'after']]);
    expect(r[0]?.rc).toBe(127);
    expect(r[1]).toEqual({ rc: 0, stdout: 'after\n', stderr: '' });
  });

  it('stdin goes to the chosen step; the others read /dev/null', async () => {
    const r = await execSteps(local, [['cat'], ['cat'], ['wc', '-c']], { stdin: 'hello', stdinStep: 1 });
    expect(r.map((x) => x.stdout.trim())).toEqual(['', 'hello', '0']);
  });

  it('a step that ends the batch: it gets the failure, the later steps were not run', async () => {
    const r = await execSteps(local, [['echo', 'one'], ['sh', '-c', 'echo partial; kill -9 $PPID'], ['echo', 'three']]);
    expect(r[0]).toEqual({ rc: 0, stdout: 'one\n', stderr: '' });
    expect(r[1]?.rc).not.toBe(0);
    expect(r[1]?.stdout).toBe('partial\n');
    expect(r[2]?.rc).toBe(255);
    expect(r[2]?.stderr).toMatch(/not run/);
  });

  it('no steps, no round trip', async () => {
    const never = { execShell: () => Promise.reject(new Error('must not be called')) };
    expect(await execSteps(never, [])).toEqual([]);
  });
});

describe('stepsScript / splitStepsOutput', () => {
  it('quotes every argv through quote.ts and redirects stdin of the other steps', () => {
    const s = stepsScript([['echo', "a'b"], ['cat']], 'M', 1);
    expect(s.split('\n')[0]).toContain(`echo 'a'\\''b' </dev/null;`);
    expect(s.split('\n')[1]?.startsWith('cat;')).toBe(true);
  });
  it('a batch killed by a signal passes the signal to the unfinished step', () => {
    const r = splitStepsOutput({ rc: 137, stdout: 'x\nM 0 0\npart', stderr: '\nM 0\nerr', signal: 'KILL' }, 'M', 3);
    expect(r[0]).toEqual({ rc: 0, stdout: 'x', stderr: '' });
    expect(r[1]).toEqual({ rc: 137, stdout: 'part', stderr: 'err', signal: 'KILL' });
    expect(r[2]?.rc).toBe(255);
  });
});
