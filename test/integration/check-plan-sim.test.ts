// --check plans a deploy: on the simulated lab's powered-off nodes, every shipped deploy
// playbook (deploy-bootc, -image, -ramdisk, -anaconda, and undeploy.yml) exits 0 in check mode, reports what each controller step would do
// (the BMC is asked, nothing is changed) and the ramdisk steps as "would run after boot"; no
// BMC is told to do anything and no disk is written. It fails on what it really finds wrong: a
// wrong BMC password. A node already running the ramdisk is checked for real (read-only).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import type { SimNode } from '../../packages/lab/src/lab/node.js';
import { type CliRun, DEPLOY, failuresOf, ROOT, runTsbm, stateArgs } from '../helpers/fault-cli.js';
import { type ImageServer, serveFiles, sha } from '../helpers/image-fixture.js';
import { scratchDirs } from '../helpers/scratch.js';
import { SIM_INSTALLER_FILES } from '../../packages/lab/src/installer/installer-iso.js';

const scratch = scratchDirs();
const PB = (name: string) => join(ROOT, 'playbooks', name);
let dir = '';
let lab: Lab;
let images: ImageServer;
let imageVars = '';

const node = (name: string): SimNode => lab.nodes.find((n) => n.cfg.name === name)!;
const touched = (n: SimNode) => ({ resets: n.bmc!.state.resets.length, media: n.bmc!.state.cdSlots().filter((s) => s.Inserted === true).length });

function run(playbook: string, extra: string[] = []): Promise<CliRun> {
  const state = stateArgs(dir);
  return runTsbm(['run', playbook, '-i', lab.inventory, '--check', '--output', 'json', ...state.args, ...extra], {
    cwd: dir,
    env: state.env,
    timeoutMs: 120_000,
  });
}

const resultsOf = (r: CliRun, host: string) =>
  r.events.filter((e) => e.type === 'host_result' && e.host === host && e.item === undefined);
const statusOf = (r: CliRun, host: string, task: string) => resultsOf(r, host).find((e) => e.task === task);

beforeAll(async () => {
  dir = scratch('tsbm-check-plan-');
  lab = await startLab({ nodes: 2, dir: join(dir, 'lab'), bootDelayMs: 100, powerDelayMs: 20 });
  const raw = join(dir, 'disk.raw');
  writeFileSync(raw, Buffer.alloc(1 << 20, 7));
  images = await serveFiles([raw]);
  imageVars = JSON.stringify({
    instance_info: { image_source: `${images.url}/disk.raw`, image_os_hash_algo: 'sha256', image_os_hash_value: sha(raw), image_disk_format: 'raw' },
  });
}, 60_000);

afterAll(async () => {
  await lab?.close();
  await images?.close();
});

const RAMDISK_STEPS: Record<string, string[]> = {
  'deploy-bootc.yml': ['Choose the root disk', 'Pull the image', 'Install the image to the root disk', 'Write the config drive', 'Flush the disk'],
  'deploy-image.yml': ['Choose the root disk', 'Write the image to the root disk', 'Write the config drive', 'Flush the disk'],
  'undeploy.yml': ['Choose the root disk', "Erase the root disk's partition tables and signatures"],
  'deploy-ramdisk.yml': [],
  'deploy-anaconda.yml': [],
};

describe('--check on a powered-off fleet', () => {
  for (const name of Object.keys(RAMDISK_STEPS)) {
    it(`${name} exits 0, says what it would do, and touches nothing`, async () => {
      const before = lab.nodes.map(touched);
      const extra = name === 'deploy-image.yml' ? ['-e', imageVars] : name === 'deploy-ramdisk.yml' ? ['-e', '{"instance_iso": "{{ ramdisk_iso }}"}'] : [];
      const r = await run(PB(name), extra);
      expect(r.code, `${r.stderr}\n${r.stdout.slice(-3000)}`).toBe(0);
      for (const h of ['node01', 'node02']) {
        const all = resultsOf(r, h);
        expect(all.filter((e) => e.status === 'failed' || e.status === 'unreachable'), h).toEqual([]);
        // the BMC was asked: the power-on says what it would send
        expect(statusOf(r, h, 'Power the node on')?.msg ?? '', h).toMatch(/^would send ResetType On \(PowerState Off\)/);
        if (RAMDISK_STEPS[name]!.length > 0) {
          expect(statusOf(r, h, 'Wait for the ramdisk and check it is this node')).toMatchObject({
            status: 'ok',
            msg: expect.stringMatching(/would wait up to \d+s for the ramdisk .*: the run would power the node on first, PowerState Off now; check mode boots nothing$/),
          });
        }
        for (const step of RAMDISK_STEPS[name]!) {
          expect(statusOf(r, h, step), `${h} ${step}`).toMatchObject({ status: 'skipped', msg: expect.stringMatching(/^would run after boot: \w+ \(/) });
        }
        expect(node(h).phase).toBe('off');
        expect((await node(h).diskLayout()).partitions, h).toEqual([]);
      }
      expect(lab.nodes.map(touched)).toEqual(before);
    }, 150_000);
  }

  it('deploy-anaconda.yml with the installer as files: the boot ISO is built on the controller (the only thing written), the nodes untouched', async () => {
    const before = lab.nodes.map(touched);
    const origin = new URL(String(lab.nodes[0]!.cfg.ramdiskIsoUrl)).origin;
    const vars = {
      installer_iso: '',
      instance_info: { kernel: `${origin}${SIM_INSTALLER_FILES.kernel}`, ramdisk: `${origin}${SIM_INSTALLER_FILES.ramdisk}`, stage2: `${origin}${SIM_INSTALLER_FILES.stage2}` },
      driver_info: { bootloader: `${origin}${SIM_INSTALLER_FILES.bootloader}` },
    };
    const r = await run(PB('deploy-anaconda.yml'), ['-e', JSON.stringify(vars)]);
    expect(r.code, `${r.stderr}\n${r.stdout.slice(-3000)}`).toBe(0);
    for (const h of ['node01', 'node02']) {
      expect(statusOf(r, h, "Choose the installer's boot ISO"), h).toMatchObject({ status: 'ok', msg: expect.stringMatching(/installer boot ISO from .* with the bootloader of /) });
      expect(statusOf(r, h, 'Insert the installer ISO and boot once from it')?.msg ?? '', h).toMatch(/^would insert \*+/);
      expect(node(h).phase).toBe('off');
    }
    expect(lab.nodes.map(touched)).toEqual(before);
  }, 150_000);

  it('fails on what it really finds wrong: a wrong BMC password (exit 2, that node only)', async () => {
    const r = await run(DEPLOY, ['-e', '{"driver_info": {"redfish_password": "not-the-password"}}', '-l', 'node02']);
    expect(r.code).toBe(2);
    expect(failuresOf(r).get('node02')).toMatchObject({ task: 'Check the node before touching it (BMC, image, ISO)', msg: expect.stringMatching(/credentials \(HTTP 401\)/) });
    // with the BMC check left out, the first power step finds it
    const skipped = await run(DEPLOY, ['-e', '{"driver_info": {"redfish_password": "not-the-password"}, "preflight_skip": ["bmc"]}', '-l', 'node02']);
    expect(skipped.code).toBe(2);
    expect(failuresOf(skipped).get('node02')?.task).toBe('Power the node off');
    expect(skipped.stdout).not.toContain('not-the-password');
  }, 150_000);
});

describe('tags on the shipped roles', () => {
  it('the shipped playbooks carry the step tags --help names', async () => {
    const state = stateArgs(dir);
    const list = await runTsbm(['run', DEPLOY, '-i', lab.inventory, '--list-tags'], { cwd: dir, env: state.env });
    expect(list.stdout).toContain('TASK TAGS: [always, configure, deploy, discover, erase, finish, power, preflight, ramdisk]');
    const undeploy = await runTsbm(['run', PB('undeploy.yml'), '-i', lab.inventory, '--list-tasks', '-t', 'finish'], { cwd: dir, env: state.env });
    expect([...undeploy.stdout.matchAll(/^ {6}(.+?)\t/gm)].map((m) => m[1])).toEqual([
      'Power the node off after the failure',
      'Eject the virtual media after the failure',
      'Eject the kickstart volume after the failure',
      'Report the failure',
      'Eject virtual media',
      'Clear the boot override',
    ]);
    const tasks = await runTsbm(['run', DEPLOY, '-i', lab.inventory, '--list-tasks', '-t', 'deploy'], { cwd: dir, env: state.env });
    // the identity check and the root disk come with the steps that need them; cleanup always
    expect([...tasks.stdout.matchAll(/^ {6}(.+?)\t/gm)].map((m) => m[1])).toEqual([
      'Wait for the ramdisk and check it is this node',
      'Choose the root disk',
      'Pull the image',
      'Install the image to the root disk',
      'Power the node off after the failure',
      'Eject the virtual media after the failure',
      'Eject the kickstart volume after the failure',
      'Report the failure',
    ]);
  });

  it('-t power runs the power step only; a tag that matches nothing is a warning naming the known ones', async () => {
    const r = await run(DEPLOY, ['-t', 'power', '-l', 'node02']);
    expect(r.code, r.stdout.slice(-2000)).toBe(0);
    expect(resultsOf(r, 'node02').map((e) => e.task)).toEqual(['Power the node off']);
    const typo = await run(DEPLOY, ['-t', 'powr', '-l', 'node02']);
    expect(typo.code).toBe(0);
    expect(resultsOf(typo, 'node02')).toEqual([]);
    const w = typo.events.find((e) => e.type === 'warning');
    expect(w?.message).toBe(
      '--tags "powr" matches no task of this playbook, so it selects nothing (did you mean "power"?); the tags it has: configure, deploy, discover, erase, finish, power, preflight, ramdisk',
    );
  }, 150_000);
});

describe('--check on a node already running the ramdisk', () => {
  it('checks the live ramdisk for real (identity, disk) and writes nothing', async () => {
    // boot node01 into the ramdisk for real, with the shipped roles
    const boot = join(dir, 'boot.yml');
    writeFileSync(boot, '- hosts: node01\n  gather_facts: false\n  tasks:\n    - import_role: {name: boot-ramdisk}\n    - import_role: {name: wait-agent}\n');
    const state = stateArgs(dir);
    const up = await runTsbm(['run', boot, '-i', lab.inventory, '--output', 'json', ...state.args], { cwd: dir, env: state.env, timeoutMs: 120_000 });
    expect(up.code, up.stderr).toBe(0);
    expect(node('node01').phase).toBe('ramdisk');
    const r = await run(DEPLOY, ['-l', 'node01']);
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    expect(statusOf(r, 'node01', 'Wait for the ramdisk and check it is this node')?.msg).toMatch(/system UUID and MAC .* match/);
    expect(statusOf(r, 'node01', 'Choose the root disk')).toMatchObject({ status: 'ok', msg: expect.stringMatching(/^\/dev\/\w+ \(\d+ MiB\)/) });
    // the install only said what it would do: the config drive plans for the table it would make
    expect(statusOf(r, 'node01', 'Write the config drive')).toMatchObject({
      status: 'changed',
      msg: expect.stringMatching(/^would write the config drive \(\d+ bytes\) to a new config-2 partition once the install has partitioned/),
    });
    expect((await node('node01').diskLayout()).partitions).toEqual([]);
    // -t deploy starts after the power-on: the identity comes from the BMC itself
    const tagged = await run(DEPLOY, ['-l', 'node01', '-t', 'deploy']);
    expect(tagged.code, tagged.stdout.slice(-3000)).toBe(0);
    expect(statusOf(tagged, 'node01', 'Wait for the ramdisk and check it is this node')?.msg).toMatch(/system UUID and MAC .* match/);
    expect(statusOf(tagged, 'node01', 'Install the image to the root disk')?.msg).toMatch(/^would install /);
    expect(tagged.events.filter((e) => e.type === 'warning')).toEqual([]);
  }, 150_000);
});
