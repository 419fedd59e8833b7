// deploy-ramdisk.yml never points a node at a URL that dies with the run (issue 36 point 7): the
// node boots the instance ISO at every reboot (persistent override), and tsbm's own HTTP server,
// which serves local files, stops when the run ends. A local instance_iso is refused at the
// preflight, nothing touched, unless instance_iso_url names a lasting server that serves it
// (checked: it answers with the local file's size); the BMC is then given that server's URL.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import type { SimNode } from '../../packages/lab/src/lab/node.js';
import { type CliRun, failuresOf, ROOT, runTsbm, stateArgs } from '../helpers/fault-cli.js';
import { type ImageServer, serveFiles } from '../helpers/image-fixture.js';

const RAMDISK = join(ROOT, 'playbooks', 'deploy-ramdisk.yml');
const PREFLIGHT = 'Check the node before touching it (BMC, image, ISO)';

let dir: string;
let lab: Lab;
let iso: string;
let lasting: ImageServer;
let stale: ImageServer;
const node = (name: string): SimNode => lab.nodes.find((n) => n.cfg.name === name)!;

const run = (extra: string[]): Promise<CliRun> => {
  const s = stateArgs(dir);
  return runTsbm(['run', RAMDISK, '-i', lab.inventory, '--output', 'json', ...s.args, ...extra], { cwd: dir, env: s.env, timeoutMs: 150_000 });
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-ramdisk-iso-'));
  lab = await startLab({ nodes: 2, dir: join(dir, 'lab'), bootDelayMs: 100, powerDelayMs: 20 });
  iso = join(dir, 'appliance.iso');
  writeFileSync(iso, Buffer.alloc(256 * 1024, 7));
  lasting = await serveFiles([iso]);
  // Another server with an older, smaller appliance.iso.
  mkdirSync(join(dir, 'old'));
  writeFileSync(join(dir, 'old', 'appliance.iso'), Buffer.alloc(128 * 1024, 3));
  stale = await serveFiles([join(dir, 'old', 'appliance.iso')]);
}, 60_000);

afterAll(async () => {
  await lab?.close();
  await lasting?.close();
  await stale?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('deploy-ramdisk.yml with a local instance ISO', () => {
  it('without instance_iso_url: refused at the preflight, saying why and what to do; nothing touched', async () => {
    const r = await run(['-l', 'node01', '-e', `instance_iso=${iso}`]);
    expect(r.code, r.stderr).toBe(2);
    const f = failuresOf(r).get('node01');
    expect(f?.task).toBe(PREFLIGHT);
    expect(f?.msg).toMatch(
      new RegExp(
        `^iso: instance_iso ${iso} is a local file, which tsbm serves only while the run lasts \\(its own HTTP server stops with it\\), and the node boots this ISO again at every reboot: its next boot would find nothing \\(publish the ISO on a web server that outlives the run and set instance_iso_url .*\\); nothing was touched$`,
      ),
    );
    expect(node('node01').bmc!.state.resets).toEqual([]);
    expect(node('node01').bmc!.state.cdSlots().filter((s) => s.Inserted === true)).toEqual([]);
  }, 150_000);

  it('with instance_iso_url serving another file: refused at the preflight, sizes named', async () => {
    const r = await run(['-l', 'node02', '-e', `instance_iso=${iso}`, '-e', `instance_iso_url=${stale.url}/`]);
    expect(r.code, r.stderr).toBe(2);
    expect(failuresOf(r).get('node02')?.msg).toMatch(/^iso: instance_iso_url \(for instance_iso .*appliance\.iso\) http:\/\/127\.0\.0\.1:\d+\/appliance\.iso serves 131072 bytes, the local file has 262144: another file, or an older copy/);
    expect(node('node02').bmc!.state.resets).toEqual([]);
  }, 150_000);

  it('with instance_iso_url (a directory URL): the BMC boots the lasting URL, persistently', async () => {
    const r = await run(['-l', 'node01', '-e', `instance_iso=${iso}`, '-e', `instance_iso_url=${lasting.url}/`]);
    expect(r.code, `${r.stderr}\n${r.stdout.slice(-3000)}`).toBe(0);
    const n = node('node01');
    const slots = n.bmc!.state.cdSlots(n.systemPath).filter((s) => s.Inserted === true);
    expect(slots.map((s) => s.Image)).toEqual([`${lasting.url}/appliance.iso`]);
    expect(n.bmc!.state.bootOf(n.systemPath)).toMatchObject({ BootSourceOverrideTarget: 'Cd', BootSourceOverrideEnabled: 'Continuous' });
    expect(lasting.probes('appliance.iso')).toBeGreaterThanOrEqual(1);
  }, 150_000);
});
