// podman_pull against this machine's real podman and a real docker-registry with htpasswd
// auth on 127.0.0.1: the pull secret works through the temporary auth file, a wrong one
// gives the clear auth error, and the auth file is gone either way. No /etc is touched
// (drop-ins go to a scratch directory; the registry is reached with tls_verify: false).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localConnection } from '../../src/connection/local.js';
import { podmanPullModule } from '../../src/modules/bootc/podman_pull.js';
import type { ModuleContext } from '../../src/module-api/types.js';
import { execSteps } from '../../src/connection/exec-steps.js';

const have = (t: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${t}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const ready = process.getuid?.() === 0 && ['podman', 'docker-registry', 'htpasswd'].every(have);
const PASSWORD = 'real-Pa55word';
const PORT = 20000 + (process.pid % 20000);
const REF = `127.0.0.1:${PORT}/tsbm-deploy/probe:${process.pid}`;
const LOCAL_TAG = `localhost/tsbm-deploy-probe:${process.pid}`;

describe.skipIf(!ready)('podman_pull with real podman and registry (needs root, podman, docker-registry, htpasswd)', { timeout: 120_000 }, () => {
  let dir: string;
  let registry: ChildProcess;
  const warnings: string[] = [];

  const ctx = (vars: Record<string, unknown>): ModuleContext => {
    const conn = localConnection('node1');
    return {
      host: 'node1',
      vars,
      check: false,
      diff: false,
      signal: new AbortController().signal,
      task: 'pull',
      services: { playbookDir: dir, tmpDir: dir, get: <T>(_k: string, c: () => T) => c(), onClose: () => undefined },
      exec: (a, o) => conn.exec(a, o),
      execSteps: (s, o) => execSteps(conn, s, o),
      execShell: (c, o) => conn.execShell(c, o),
      put: (d, p, o) => conn.put(d, p, o),
      get: (p) => conn.get(p),
      local: (a, o) => conn.exec(a, o),
      connect: async () => conn,
      secret: <T extends string>(v: T) => v,
      log: () => undefined,
      warn: (m: string) => warnings.push(m),
      progress: () => undefined,
    };
  };
  const args = () => ({
    tls_verify: false,
    auth_dir: path.join(dir, 'run'),
    containers_conf_dir: path.join(dir, 'containers.conf.d'),
    registries_conf_dir: path.join(dir, 'registries.conf.d'),
  });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tsbm-deploy-podman-'));
    mkdirSync(path.join(dir, 'data'));
    writeFileSync(path.join(dir, 'htpasswd'), execFileSync('htpasswd', ['-Bbn', 'tester', PASSWORD]));
    writeFileSync(
      path.join(dir, 'config.yml'),
      `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/data\nhttp:\n  addr: 127.0.0.1:${PORT}\nauth:\n  htpasswd:\n    realm: tsbm\n    path: ${dir}/htpasswd\n`,
    );
    registry = spawn('docker-registry', ['serve', path.join(dir, 'config.yml')], { stdio: 'ignore' });
    for (let i = 0; i < 50; i++) {
      const r = await fetch(`http://127.0.0.1:${PORT}/v2/`).catch(() => undefined);
      if (r?.status === 401) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    mkdirSync(path.join(dir, 'root'));
    writeFileSync(path.join(dir, 'root', 'hello'), 'hello\n');
    execFileSync('sh', ['-c', `tar -C ${dir}/root -c . | podman import - ${LOCAL_TAG}`], { stdio: 'ignore' });
    const auth = path.join(dir, 'push-auth.json');
    writeFileSync(auth, JSON.stringify({ auths: { [`127.0.0.1:${PORT}`]: { auth: Buffer.from(`tester:${PASSWORD}`).toString('base64') } } }));
    execFileSync('podman', ['push', '--tls-verify=false', '--authfile', auth, LOCAL_TAG, `docker://${REF}`], { stdio: 'ignore' });
    execFileSync('podman', ['rmi', LOCAL_TAG], { stdio: 'ignore' });
  });

  afterAll(async () => {
    for (const t of [REF, LOCAL_TAG]) {
      try {
        execFileSync('podman', ['rmi', '-f', t], { stdio: 'ignore' });
      } catch {
        // not there
      }
    }
    registry?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a wrong secret gets the clear auth error and leaves no auth file', async () => {
    const wrong = Buffer.from('tester:nope').toString('base64');
    await expect(podmanPullModule.run(ctx({ instance_info: { image_source: `oci://${REF}`, image_pull_secret: wrong } }), args())).rejects.toThrow(
      /registry 127\.0\.0\.1:\d+ refused the pull .*unauthorized/,
    );
    expect(readdirSync(path.join(dir, 'run'))).toEqual([]);
  });

  it('the right secret pulls; the auth file is gone; the image is there', async () => {
    const token = Buffer.from(`tester:${PASSWORD}`).toString('base64');
    const r = await podmanPullModule.run(ctx({ instance_info: { image_source: `oci://${REF}`, image_pull_secret: token } }), args());
    expect(r).toMatchObject({ changed: true, ref: REF });
    expect(String(r.image_id)).toMatch(/^[0-9a-f]{64}$/);
    expect(readdirSync(path.join(dir, 'run'))).toEqual([]);
    expect(existsSync(path.join(dir, 'containers.conf.d', 'zz-tsbm-ramdisk.conf'))).toBe(true);
    execFileSync('podman', ['image', 'exists', REF]);
  });

  // podman itself decides which drop-in wins: its effective configuration, read with the
  // directory the module wrote (beside a site-built ramdisk's own drop-in for the same registry)
  // mounted over /etc/containers/registries.conf.d in a private mount namespace.
  it.skipIf(!existsSync('/etc/containers/registries.conf.d'))(
    "with the ramdisk's own drop-in for the same registry, podman's effective configuration has tsbm's mirror",
    async () => {
      const regDir = path.join(dir, 'registries.conf.d');
      mkdirSync(regDir, { recursive: true });
      const registry = `127.0.0.1:${PORT}`;
      writeFileSync(path.join(regDir, '99-site.conf'), `[[registry]]\nlocation = "${registry}"\n`);
      const token = Buffer.from(`tester:${PASSWORD}`).toString('base64');
      await podmanPullModule.run(ctx({ instance_info: { image_source: `oci://${REF}`, image_pull_secret: token } }), {
        ...args(),
        registries: [{ prefix: registry, mirrors: ['mirror.lab:5000'] }],
      });
      const effective = JSON.parse(
        execFileSync(
          'unshare',
          ['-m', 'sh', '-c', 'mount --bind "$1" /etc/containers/registries.conf.d && podman info --format "{{json .Registries}}"', 'sh', regDir],
          { encoding: 'utf8' },
        ),
      ) as Record<string, { Mirrors: { Location: string }[] | null; Insecure: boolean }>;
      expect(effective[registry]).toMatchObject({ Insecure: true, Mirrors: [{ Location: 'mirror.lab:5000' }] });
      rmSync(path.join(regDir, '99-site.conf'));
    },
  );
});
