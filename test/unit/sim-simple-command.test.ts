// The lab's shell-free path: plain quoted words give exactly the argv a real sh would run, and
// anything a shell would interpret is left to the shell.
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quoteArgv } from '../../src/connection/quote.js';
import { withPidPrelude } from '../../src/connection/remote-pid.js';
import { directSpawn, simpleArgv } from '../../src/sim/ssh/simple-command.js';

function shArgv(command: string): string[] {
  // What sh itself makes of the words: print each argument NUL-terminated.
  const out = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${command}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('simpleArgv', () => {
  it('inverts quoteArgv for any arguments, as sh does', () => {
    const arg = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', "'", '"', '$', '\\', '*', '-', '/', '=', '\n', 'é'), maxLength: 12 });
    fc.assert(
      fc.property(fc.array(arg, { minLength: 1, maxLength: 6 }), (argv) => {
        const words = simpleArgv(quoteArgv(['cmd', ...argv]));
        expect(words).toEqual(['cmd', ...argv]);
        expect(shArgv(quoteArgv(argv))).toEqual(argv);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    'echo $HOME',
    'ls *',
    'a && b',
    'a | b',
    'a; b',
    'cat > /tmp/x',
    'echo "x"',
    'FOO=bar cmd',
    'echo ~',
    'a  b',
    '',
    '(a)',
    'echo `id`',
  ])('leaves %j to the shell', (cmd) => {
    expect(simpleArgv(cmd)).toBeUndefined();
  });
});

describe('directSpawn', () => {
  it("runs tsbm's PID prelude without a shell in front of it", () => {
    const cmd = withPidPrelude(quoteArgv(['lsblk', '-J', "it's /dev/vda"]));
    const d = directSpawn(cmd)!;
    expect(d.file).toBe('/bin/sh');
    expect(d.args.slice(0, 1)).toEqual(['-c']);
    expect(d.args.slice(-4)).toEqual(['sh', 'lsblk', '-J', "it's /dev/vda"]);
  });

  it('keeps sh -c for other programs (builtins, not-found messages)', () => {
    expect(directSpawn(quoteArgv(['kill', '-KILL', '-123']))).toBeUndefined();
    expect(directSpawn(quoteArgv(['/usr/bin/true']))).toBeUndefined();
  });
});
