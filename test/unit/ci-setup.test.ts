// .ci/setup.sh fails rather than letting a CI run skip: not root is an error (exit 1), and the
// programs the suite runs (tmux for the real-terminal tests among them) are read back after install.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SETUP = resolve(import.meta.dirname, '../../.ci/setup.sh');
const bin = mkdtempSync(join(tmpdir(), 'tsbm-ci-setup-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

describe('.ci/setup.sh', () => {
  it('not root: exit 1 with what to do, before installing anything', () => {
    // An `id` that says uid 1000; an apt-get that records being called.
    writeFileSync(join(bin, 'id'), '#!/bin/sh\necho 1000\n');
    writeFileSync(join(bin, 'apt-get'), `#!/bin/sh\ntouch ${join(bin, 'apt-called')}\n`);
    for (const f of ['id', 'apt-get']) chmodSync(join(bin, f), 0o755);
    const r = spawnSync('bash', [SETUP], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/must run as root .*sudo bash \.ci\/setup\.sh/);
    expect(spawnSync('test', ['-e', join(bin, 'apt-called')]).status).toBe(1);
  });

  it('installs tmux and reads back every program the suite runs', () => {
    const text = readFileSync(SETUP, 'utf8');
    expect(text).toMatch(/^PKGS=\([^)]*\btmux\b/m);
    expect(text).toMatch(/^PROGS=\([^)]*\btmux\b[^)]*\)/m);
    expect(text).toMatch(/still missing after install: .*\n\s*exit 1/);
  });
});
