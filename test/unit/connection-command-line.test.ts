import { describe, expect, it } from 'vitest';
import { buildRemoteCommand } from '../../src/connection/command-line.js';
import { parseJump } from '../../src/connection/jump.js';
import {
  hasPidPrelude,
  INLINE_PID_PRELUDE,
  isPosixShell,
  killArgv,
  PID_PRELUDE,
  PidLineFilter,
  SH_SCRIPT_PID_PRELUDE,
  shScriptWithPidReport,
  stripPidPrelude,
  withPidPrelude,
} from '../../src/connection/remote-pid.js';
import { quoteArgv } from '../../src/util/shell-quote.js';

describe('buildRemoteCommand', () => {
  it('quotes argv and wraps become, env and cwd in a fixed order', () => {
    expect(buildRemoteCommand(['ls', '-l', 'a b']).command).toBe("ls -l 'a b'");
    expect(buildRemoteCommand(['id'], { become: { user: 'app' } }).command).toBe('sudo -n -u app -- id');
    expect(buildRemoteCommand(['id'], { env: { A: 'x y' } }).command).toBe("env -- 'A=x y' id");
    expect(buildRemoteCommand(['id'], { cwd: '/srv/x y', become: {} }).command).toBe(
      `sudo -n -- sh -c 'cd -- "$1" && shift && exec "$@"' sh '/srv/x y' id`,
    );
  });

  it('moves secret-looking env names to stdin, never the command line', () => {
    const r = buildRemoteCommand(['podman', 'login'], { env: { REGISTRY_PASSWORD: 'hunter22', MODE: 'x' }, secretEnv: { API_KEY: 'k-123' } });
    expect(r.command).not.toContain('hunter22');
    expect(r.command).not.toContain('k-123');
    expect(r.command).toContain('MODE=x');
    expect(r.stdinPrefix).toBe('k-123\nhunter22\n');
    expect(r.command).toContain('IFS= read -r API_KEY && export API_KEY');
  });

  it('rejects bad env names, multi-line secrets and empty argv', () => {
    expect(() => buildRemoteCommand(['x'], { env: { 'A;rm': '1' } })).toThrow(/invalid environment variable name/);
    expect(() => buildRemoteCommand(['x'], { secretEnv: { S: 'a\nb' } })).toThrow(/newline/);
    expect(() => buildRemoteCommand([])).toThrow(/empty command/);
  });
});

describe('PID prelude', () => {
  it('is stripped back to the original command', () => {
    expect(stripPidPrelude(withPidPrelude('ls -l'))).toBe('ls -l');
    expect(stripPidPrelude('ls -l')).toBe('ls -l');
    expect(PID_PRELUDE.startsWith('sh -c ')).toBe(true);
    expect(stripPidPrelude(withPidPrelude("'ls' '-l'", true))).toBe("'ls' '-l'");
    expect(withPidPrelude("'ls'", true)).toBe(`${INLINE_PID_PRELUDE}'ls'`);
    expect(INLINE_PID_PRELUDE.endsWith('; exec ')).toBe(true);
    expect([withPidPrelude('x'), withPidPrelude('x', true), 'x'].map(hasPidPrelude)).toEqual([true, true, false]);
  });

  it("a script's own sh -c reports for a login shell not yet known, and is logged as the plain sh -c", () => {
    const script = "echo 'a b' </dev/null; printf '%s\\n' \"$x\"";
    const line = shScriptWithPidReport(script);
    expect(line.startsWith(SH_SCRIPT_PID_PRELUDE)).toBe(true);
    expect(line).toContain('$SHELL');
    expect(hasPidPrelude(line)).toBe(true);
    expect(stripPidPrelude(line)).toBe(quoteArgv(['sh', '-c', script]));
  });

  it('runs the command inline only in a login shell known to be POSIX', () => {
    for (const s of ['/bin/sh', '/bin/bash', '/usr/bin/dash', '/bin/zsh', '/bin/ksh', 'ash']) expect(isPosixShell(s), s).toBe(true);
    for (const s of ['/usr/bin/fish', '/bin/tcsh', '/bin/csh', '/usr/bin/nu', '', undefined]) expect(isPosixShell(s), String(s)).toBe(false);
  });

  it("reads the login shell from the sh -c prelude's report", () => {
    const seen: unknown[] = [];
    for (const line of ['tsbm-pid 42 40 /bin/bash\n', 'tsbm-pid 42 40 \n', 'tsbm-pid 42  /opt/my shell/zsh\n', 'tsbm-pid 42 40\n']) {
      new PidLineFilter((p) => seen.push(p)).push(Buffer.from(line));
    }
    expect(seen).toEqual([
      { pid: 42, pgid: 40, shell: '/bin/bash' },
      { pid: 42, pgid: 40 },
      { pid: 42, shell: '/opt/my shell/zsh' },
      { pid: 42, pgid: 40 },
    ]);
  });

  it('takes the report line out of stderr, even split across chunks', () => {
    const seen: unknown[] = [];
    const f = new PidLineFilter((p) => seen.push(p));
    expect(f.push(Buffer.from('tsbm-p')).toString()).toBe('');
    expect(f.push(Buffer.from('id 42 40\nwarn: x\n')).toString()).toBe('warn: x\n');
    expect(f.push(Buffer.from('more')).toString()).toBe('more');
    expect(seen).toEqual([{ pid: 42, pgid: 40 }]);
  });

  it('passes ordinary stderr through untouched', () => {
    const seen: unknown[] = [];
    const f = new PidLineFilter((p) => seen.push(p));
    expect(f.push(Buffer.from('error: boom\n')).toString()).toBe('error: boom\n');
    expect(seen).toEqual([undefined]);
    const g = new PidLineFilter(() => {});
    expect(g.push(Buffer.from('ts')).toString()).toBe('');
    expect(g.flush().toString()).toBe('ts');
  });

  it('kills the process group, via sudo under become', () => {
    // What the script does is tested against real shells in test/integration/connection-remote-kill.test.ts.
    expect(killArgv({ pid: 5, pgid: 4 })).toEqual(['sh', '-c', expect.stringContaining('kill -KILL "-$1"'), 'sh', '4', '5']);
    expect(killArgv({ pid: 5 }, {})).toEqual(['sudo', '-n', '--', 'kill', '-KILL', '5']);
  });
});

describe('parseJump', () => {
  it('parses user@host:port chains with defaults', () => {
    expect(parseJump('admin@bastion:2222, 10.0.0.1')).toEqual([
      { user: 'admin', address: 'bastion', port: 2222 },
      { address: '10.0.0.1', port: 22 },
    ]);
    expect(parseJump('[fd00::1]:22')).toEqual([{ address: 'fd00::1', port: 22 }]);
    expect(() => parseJump('a@b:99999')).toThrow(/bad port/);
  });
});
