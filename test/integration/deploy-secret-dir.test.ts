// The ramdisk directory that holds a pull secret for the length of a pull is made fresh every
// time: an existing directory with a loose mode is not trusted as it is, and auth files a killed
// run left behind are removed before anything else of the pull runs (also by a pull that needs
// no secret, as a resumed run's may not).
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultSecretDir } from '../../src/modules/bootc/secret-dir.js';
import { podmanPullModule } from '../../src/modules/bootc/podman_pull.js';
import { onNode, ranSteps, type SimNode, startSimNode } from './deploy-sim-context.js';

const PASSWORD = 'Sup3r-s3cret-pw';
const TOKEN = Buffer.from(`tester:${PASSWORD}`).toString('base64');
const IMAGE = 'oci://10.88.0.1:5001/bootc/test:1';
const MEMINFO = 'MemTotal: 16000000 kB\nMemAvailable:   8000000 kB\n';

let node: SimNode | undefined;
afterEach(async () => {
  await node?.close();
  node = undefined;
});

// Paths on the node; the tests look at them in its sandbox (n.root).
const args = (_n: SimNode, extra: Record<string, unknown> = {}) => ({
  auth_dir: '/run/tsbm',
  containers_conf_dir: '/etc/containers/containers.conf.d',
  registries_conf_dir: '/etc/containers/registries.conf.d',
  memory_check: false,
  ...extra,
});

/** The auth directory as a killed run left it: loose mode, and its auth file still there. */
function leftovers(n: SimNode): { dir: string; stale: string } {
  const dir = path.join(n.root, 'run/tsbm');
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  const stale = path.join(dir, 'auth-killedrun.json');
  writeFileSync(stale, JSON.stringify({ auths: { 'r:5000': { auth: 'b2xkOnNlY3JldA==' } } }), { mode: 0o600 });
  return { dir, stale };
}

describe('the pull secret directory', () => {
  it('an existing 0755 directory is made anew as 0700, and podman saw it that way', async () => {
    node = await startSimNode({ registryAuth: `tester:${PASSWORD}`, meminfo: MEMINFO });
    const { dir } = leftovers(node);
    // podman (simulated) records the mode of the auth file's directory while it pulls.
    const r = await node.run(podmanPullModule, args(node), { instance_info: { image_source: IMAGE, image_pull_secret: TOKEN } });
    expect(r.changed).toBe(true);
    expect(readFileSync(path.join(node.state, 'last-authdir-mode'), 'utf8').trim()).toBe('700');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('an auth file left by a killed run is removed first, with a warning, before the pull runs', async () => {
    node = await startSimNode({ registryAuth: `tester:${PASSWORD}`, meminfo: MEMINFO });
    const { stale } = leftovers(node);
    await node.run(podmanPullModule, args(node), { instance_info: { image_source: IMAGE, image_pull_secret: TOKEN } });
    expect(existsSync(stale)).toBe(false);
    expect(node.events.some((e) => e.kind === 'warn' && e.message.includes(`removed ${stale}, a pull secret file an earlier (killed) run left`))).toBe(true);
    // The cleanup is the first step of the first round trip, ahead of any podman command.
    const steps = ranSteps(node.host.commands);
    expect(steps[0]).toMatch(/^sh -c /);
    expect(steps.findIndex((c) => c.startsWith('podman'))).toBeGreaterThan(0);
  });

  it('a pull without a secret (a resumed run\'s, say) still removes the leftovers, and leaves the directory be', async () => {
    node = await startSimNode({ meminfo: MEMINFO });
    const { dir, stale } = leftovers(node);
    writeFileSync(path.join(dir, 'someone-elses'), 'x');
    const r = await node.run(podmanPullModule, args(node), { instance_info: { image_source: IMAGE } });
    expect(r.changed).toBe(true);
    expect(existsSync(stale)).toBe(false);
    expect(readdirSync(dir)).toEqual(['someone-elses']);
  });

  it('a directory holding foreign files, or a symlink, is refused for the secret; nothing is pulled', async () => {
    node = await startSimNode({ registryAuth: `tester:${PASSWORD}`, meminfo: MEMINFO });
    const { dir } = leftovers(node);
    writeFileSync(path.join(dir, 'someone-elses'), 'x');
    await expect(node.run(podmanPullModule, args(node), { instance_info: { image_source: IMAGE, image_pull_secret: TOKEN } })).rejects.toThrow(
      /node1: cannot make a private directory for the pull secret: .*holds files tsbm did not put there/,
    );
    const link = path.join(node.root, 'run/link');
    symlinkSync(dir, link);
    await expect(
      node.run(podmanPullModule, args(node, { auth_dir: onNode(node, link) }), { instance_info: { image_source: IMAGE, image_pull_secret: TOKEN } }),
    ).rejects.toThrow(/is a symbolic link/);
    expect(ranSteps(node.host.commands).some((c) => c.startsWith('podman pull') && !c.includes('--help'))).toBe(false);
  });

  describe('in one round trip (the podman version wait_agent read: the directory is made in the pull batch)', () => {
    const oneTrip = { facts: { ramdisk_podman_version: 'podman version 4.3.1' } };
    it('leftovers go with a warning, and the auth file is written into the fresh 0700 directory', async () => {
      node = await startSimNode({ registryAuth: `tester:${PASSWORD}`, meminfo: MEMINFO });
      const { dir, stale } = leftovers(node);
      const r = await node.run(podmanPullModule, args(node), { instance_info: { image_source: IMAGE, image_pull_secret: TOKEN }, ...oneTrip });
      expect(r.changed).toBe(true);
      expect(node.host.commands).toHaveLength(1);
      expect(existsSync(stale)).toBe(false);
      expect(node.events.some((e) => e.kind === 'warn' && e.message.includes(`removed ${stale}`))).toBe(true);
      expect(readFileSync(path.join(node.state, 'last-authdir-mode'), 'utf8').trim()).toBe('700');
      expect(readdirSync(dir)).toEqual([]);
    });
    it('a directory holding foreign files, or a symlink: refused, and neither the auth file nor the pull ran', async () => {
      node = await startSimNode({ registryAuth: `tester:${PASSWORD}`, meminfo: MEMINFO });
      const { dir } = leftovers(node);
      writeFileSync(path.join(dir, 'someone-elses'), 'x');
      await expect(
        node.run(podmanPullModule, args(node), { instance_info: { image_source: IMAGE, image_pull_secret: TOKEN }, ...oneTrip }),
      ).rejects.toThrow(/node1: cannot make a private directory for the pull secret: .*holds files tsbm did not put there/);
      expect(readdirSync(dir).sort()).toEqual(['someone-elses']);
      const link = path.join(node.root, 'run/link');
      const target = path.join(node.root, 'run/elsewhere');
      mkdirSync(target, { mode: 0o700 });
      symlinkSync(target, link);
      await expect(
        node.run(podmanPullModule, args(node, { auth_dir: onNode(node, link) }), { instance_info: { image_source: IMAGE, image_pull_secret: TOKEN }, ...oneTrip }),
      ).rejects.toThrow(/is a symbolic link/);
      expect(readdirSync(target)).toEqual([]);
      expect(existsSync(path.join(node.state, 'last-authfile'))).toBe(false);
    });
  });

  it("by default each node has its own directory, so nodes sharing a file system never clean up each other's", () => {
    expect(defaultSecretDir('node01')).toBe('/run/tsbm/node01');
    expect(defaultSecretDir('rack1/node 2')).toBe('/run/tsbm/rack1_node_2');
    expect(defaultSecretDir('..')).toBe('/run/tsbm/_..');
    expect(defaultSecretDir('a')).not.toBe(defaultSecretDir('b'));
  });
});
