// What the sushy-tools Redfish emulator (libvirt driver, as Ironic's CI runs it) showed tsbm, on
// the fake BMC's sushy-tools profile: clearing the boot override sends a target with Disabled
// (a bare Disabled is refused with 400) and accepts the override the BMC keeps; the BMC's own
// words reach the error whatever the body's content type (plain text labelled JSON, an error
// document whose ExtendedInfo carries only an id). Then undeploy.yml, which failed at "Clear the
// boot override" on sushy-tools, runs through on a lab of such BMCs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redfishBootDeviceModule } from '../../src/modules/redfish/redfish_boot_device.js';
import { findSystem } from '../../src/redfish/discovery.js';
import { redfishClientFor } from '../../src/redfish/pool.js';
import { startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { MOCKUPS_DIR } from '../../packages/lab/src/lab/package-paths.js';
import { DEPLOY, ROOT, runTsbm, stateArgs } from '../helpers/fault-cli.js';
import { closeAfterEach, driverInfo, makeCtx } from './redfish-helpers.js';

const SUSHY = join(MOCKUPS_DIR, 'sushy-tools-libvirt');
const track = closeAfterEach();

async function sushyBmc() {
  const bmc = await startFakeBmc({ mockupDir: SUSHY, password: 'S3cret-pass!' });
  const t = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: false }) });
  track(bmc, t);
  return { bmc, t };
}

describe('the fake BMC behaves as sushy-tools does', () => {
  it('refuses a bare Disabled with 400 and plain text labelled JSON; tsbm shows that text', async () => {
    const { t } = await sushyBmc();
    const client = redfishClientFor(t.ctx, t.ctx.vars.driver_info);
    const system = await findSystem(client);
    const res = await client.raw('PATCH', system.path, { Boot: { BootSourceOverrideEnabled: 'Disabled' } });
    expect(res.status).toBe(400);
    expect(res.body).toBeUndefined(); // not JSON, whatever the header says
    expect(() => client.check(res, 'PATCH', system.path)).toThrow(/HTTP 400\): The Boot element needs BootSourceOverrideTarget/);
  });

  it('fails target None with 500 and an error document whose ExtendedInfo has only an id: tsbm shows error.message', async () => {
    const { t } = await sushyBmc();
    const client = redfishClientFor(t.ctx, t.ctx.vars.driver_info);
    const system = await findSystem(client);
    const res = await client.raw('PATCH', system.path, { Boot: { BootSourceOverrideEnabled: 'Disabled', BootSourceOverrideTarget: 'None' } });
    expect(res.status).toBe(500);
    expect(() => client.check(res, 'PATCH', system.path)).toThrow(/HTTP 500\): The domain .* has no libvirt device for boot target None/);
  });

  it('redfish_boot_device none sends Hdd with Disabled, and reports the override the BMC keeps (Hdd Continuous) with a warning', async () => {
    const { bmc, t } = await sushyBmc();
    // A deploy left the ramdisk's CD as the override (sushy-tools keeps it Continuous).
    const set = await redfishBootDeviceModule.run(t.ctx, { device: 'cd' });
    expect(set.msg).toBe('boot Cd Continuous');
    const r = await redfishBootDeviceModule.run(t.ctx, { device: 'none' });
    expect(r.failed).toBeFalsy();
    expect(r.changed).toBe(true);
    expect(r.msg).toBe('boot Hdd Continuous');
    expect(t.warnings.join('\n')).toMatch(/keeps a boot override: it reads back Hdd Continuous after Disabled was sent/);
    expect(bmc.state.boot).toMatchObject({ BootSourceOverrideTarget: 'Hdd', BootSourceOverrideEnabled: 'Continuous' });
    const sent = bmc.requests().filter((q) => q.startsWith('PATCH '));
    expect(sent).toHaveLength(2);
  });
});

describe('undeploy.yml on a lab of sushy-tools BMCs', () => {
  let dir: string;
  let lab: Lab;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-sushy-lab-'));
    lab = await startLab({ nodes: 1, dir: join(dir, 'lab'), mockups: [SUSHY], bootDelayMs: 150, powerDelayMs: 30 });
  }, 60_000);
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('deploys, then undeploys: the erase, eject and the boot override reset all pass (exit 0)', async () => {
    const s = stateArgs(dir);
    const run = (playbook: string) =>
      runTsbm(['run', playbook, '-i', lab.inventory, '--output', 'json', ...s.args], { cwd: dir, env: s.env, timeoutMs: 150_000 });
    const d = await run(DEPLOY);
    expect(d.code, d.stderr).toBe(0);
    const u = await run(join(ROOT, 'playbooks', 'undeploy.yml'));
    expect(u.code, u.stderr + u.stdout.slice(-3000)).toBe(0);
    const clear = u.events.find((e) => e.type === 'host_result' && e.task === 'Clear the boot override');
    expect(clear?.status).toBe('changed');
    expect(clear?.msg).toBe('boot Hdd Continuous');
    expect(await lab.nodes[0]!.status()).toMatchObject({ power: 'Off', media: '', bootOverride: 'Hdd/Continuous' });
  }, 240_000);
});
