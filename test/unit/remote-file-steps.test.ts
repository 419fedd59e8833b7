// The steps that write small files on the ramdisk inside a command batch, run by the shells a
// ramdisk may have (dash as Debian's sh, bash, busybox sh).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { quoteArgv } from '../../src/util/shell-quote.js';
import { STDIN_FILE_FAILED, withStdinFile, writeFileStep } from '../../src/modules/bootc/remote-file-steps.js';

const shells = ['/bin/sh', '/bin/dash', '/bin/bash', '/bin/busybox'].filter((s) => existsSync(s));
const run = (shell: string, argv: string[], input = '') => {
  const args = shell.endsWith('busybox') ? ['sh', '-c', quoteArgv(argv)] : ['-c', quoteArgv(argv)];
  return spawnSync(shell, args, { input, encoding: 'utf8' });
};

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

describe.each(shells)('remote file steps under %s', (shell) => {
  it('writeFileStep writes every byte of the content with the mode, and leaves no temporary file', () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-rfs-'));
    const content = `[engine]\nno_pivot_root = true\n# 'quotes' "double" $HOME \`cmd\` \\ %s %d -n\n`;
    const r = run(shell, writeFileStep(join(dir, 'a.conf'), content));
    expect(r.status).toBe(0);
    expect(readFileSync(join(dir, 'a.conf'), 'utf8')).toBe(content);
    expect((statSync(join(dir, 'a.conf')).mode & 0o777).toString(8)).toBe('644');
    expect(readdirSync(dir)).toEqual(['a.conf']);
  });
  it('writeFileStep into a missing directory fails and leaves nothing', () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-rfs-'));
    const r = run(shell, writeFileStep(join(dir, 'missing', 'a.conf'), 'x'));
    expect(r.status).not.toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });
  it('withStdinFile saves stdin as a 0600 file, then runs the command with it there', () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-rfs-'));
    const secret = '{"auths":{"r:5000":{"auth":"c2VjcmV0"}}}';
    const f = join(dir, 'auth.json');
    const r = run(shell, withStdinFile(f, ['sh', '-c', 'stat -c %a "$1"; cat "$1"; cat', 'sh', f]), secret);
    expect(r.status).toBe(0);
    // The command reads no more of stdin: the file had all of it.
    expect(r.stdout).toBe(`600\n${secret}`);
  });
  it('withStdinFile runs nothing when it cannot write the file', () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-rfs-'));
    const marker = join(dir, 'ran');
    const r = run(shell, withStdinFile(join(dir, 'missing', 'auth.json'), ['touch', marker]), 'secret');
    expect(r.status).toBe(STDIN_FILE_FAILED);
    expect(r.stderr).toMatch(/cannot write .*missing\/auth\.json/);
    expect(existsSync(marker)).toBe(false);
  });
});
