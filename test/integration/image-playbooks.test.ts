// deploy-image.yml and deploy-ramdisk.yml: they validate against the example inventories and
// reuse deploy-bootc.yml's roles wherever the step is the same.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectValidationErrors } from '../../src/cli/validate-command.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { staticTasks } from '../../src/playbook/static-tasks.js';

const root = path.resolve(import.meta.dirname, '../..');
const IMAGE = path.join(root, 'playbooks/deploy-image.yml');
const RAMDISK = path.join(root, 'playbooks/deploy-ramdisk.yml');
const INVENTORIES = ['lab.yml', 'sim.yml'].map((f) => path.join(root, 'inventory-examples', f));

const tasks = staticTasks;

describe('image and ramdisk playbooks', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    process.env.BMC_PASSWORD = 'lab-password';
    process.env.PULL_SECRET = Buffer.from('u:p').toString('base64');
  });
  afterEach(() => {
    process.env = { ...saved };
  });

  it('validate against the example inventories; deploy-ramdisk.yml needs the ISO they do not give', async () => {
    for (const inv of INVENTORIES) {
      const errors = await collectValidationErrors([IMAGE], { inventory: [inv] });
      expect(
        errors.map((e) => e.oneLine()),
        inv,
      ).toEqual([]);
      const ramdisk = await collectValidationErrors([RAMDISK], { inventory: [inv] });
      expect(ramdisk.map((e) => e.message)).toEqual([
        expect.stringMatching(/^undefined variable "instance_info.boot_iso" \(read through "instance_iso"\) in task "Insert the instance ISO" for hosts /),
      ]);
      const given = await collectValidationErrors([RAMDISK], { inventory: [inv], extraVars: ['instance_iso=http://x/i.iso'] });
      expect(given).toEqual([]);
    }
  });

  it('deploy-image.yml is deploy-bootc.yml with the image role instead of deploy', () => {
    const bootc = loadPlaybook(path.join(root, 'playbooks/deploy-bootc.yml')).plays[0];
    const play = loadPlaybook(IMAGE).plays[0];
    const roleNames = (p: typeof play) =>
      [...(p?.roleTasks ?? []), ...(p?.tasks ?? [])].flatMap((n) =>
        n.kind === 'block' ? [n.role?.name, ...n.block.map((b) => (b.kind === 'block' ? b.role?.name : undefined)), ...n.rescue.map((b) => (b.kind === 'block' ? b.role?.name : undefined))] : [],
      ).filter((x) => x !== undefined);
    expect(roleNames(play)).toEqual(roleNames(bootc).map((r) => (r === 'deploy' ? 'image' : r)));
    expect(roleNames(play)).toContain('cleanup-on-failure');
    expect(tasks(play?.roleTasks ?? []).find((t) => t.module === 'deploy_preflight')?.args.deploy).toBe('{{ preflight_deploy }}');
    expect(play?.roleTasks[0]?.vars).toEqual({ preflight_deploy: 'image' });
    const all = tasks([...(play?.roleTasks ?? []), ...(play?.tasks ?? [])]);
    const steps = all.map((t) => t.module);
    expect(steps.slice(steps.indexOf('root_device'), steps.indexOf('configdrive_write') + 1)).toEqual([
      'root_device',
      'image_write',
      'configdrive_write',
    ]);
    expect(steps).not.toContain('podman_pull');
    expect(all.find((t) => t.module === 'image_write')?.args.device).toBe('{{ root.device }}');
  });

  it('deploy-ramdisk.yml boots the ISO persistently and writes no disk', () => {
    const play = loadPlaybook(RAMDISK).plays[0];
    const all = tasks([...(play?.roleTasks ?? []), ...(play?.tasks ?? [])]);
    expect(all.map((t) => t.module)).toEqual([
      'assert',
      'deploy_preflight',
      'redfish_power',
      'vmedia_boot',
      'redfish_boot_device',
      'redfish_power',
      'wait_agent',
      // the rescue
      'redfish_power',
      'vmedia_boot',
      'kickstart_media',
      'fail',
    ]);
    expect(play?.roleTasks[0]?.vars).toEqual({ preflight_deploy: 'ramdisk' });
    expect(all.find((t) => t.module === 'redfish_boot_device')?.args).toMatchObject({
      device: 'cd',
      persistent: true,
    });
    expect(all.find((t) => t.module === 'vmedia_boot')?.args.boot).toBe(false);
  });
});
