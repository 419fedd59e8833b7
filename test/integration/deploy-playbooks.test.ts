// The shipped playbooks: they validate against the lab inventory and run the steps in
// Ironic's order with the arguments the modules expect.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectValidationErrors } from '../../src/cli/validate-command.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { staticTasks } from '../../src/playbook/static-tasks.js';

const root = path.resolve(import.meta.dirname, '../..');
const DEPLOY = path.join(root, 'playbooks/deploy-bootc.yml');
const UNDEPLOY = path.join(root, 'playbooks/undeploy.yml');
const LAB = path.join(root, 'inventory-examples/lab.yml');

const tasks = staticTasks;

describe('shipped playbooks', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    process.env.BMC_PASSWORD = 'lab-password';
    process.env.PULL_SECRET = Buffer.from('u:p').toString('base64');
  });
  afterEach(() => {
    process.env = { ...saved };
  });

  it('deploy-bootc.yml and undeploy.yml validate against the lab inventory', async () => {
    const errors = await collectValidationErrors([DEPLOY, UNDEPLOY], { inventory: [LAB] });
    expect(errors.map((e) => e.oneLine())).toEqual([]);
  });

  it("deploy-bootc.yml checks first, then runs the steps in Ironic's order, with a cleanup rescue", () => {
    const pb = loadPlaybook(DEPLOY);
    const play = pb.plays[0];
    expect(play?.roles.map((r) => r.name)).toEqual(['preflight', 'power-off']);
    const block = play?.tasks[0];
    if (block?.kind !== 'block') throw new Error('the deploy steps are one block');
    const inBlock = tasks(block.block).map((t) => `${t.module}${t.args.state ? `:${String(t.args.state)}` : ''}`);
    expect(inBlock).toEqual([
      'vmedia_boot:inserted',
      'redfish_power:on',
      'wait_agent',
      'root_device',
      'podman_pull',
      'bootc_install',
      'configdrive_write',
      'command',
      'vmedia_boot:ejected',
      'redfish_boot_device',
      'redfish_power:cycle',
      'wait_agent',
    ]);
    expect(tasks(block.rescue).map((t) => `${t.module}${t.args.state ? `:${String(t.args.state)}` : ''}`)).toEqual([
      'redfish_power:off',
      'vmedia_boot:ejected',
      // Only deploy-anaconda.yml turns this one on (cleanup_kickstart_media).
      'kickstart_media:ejected',
      'fail',
    ]);
    const before = tasks(play?.roleTasks ?? []).map((t) => `${t.module}${t.args.state ? `:${String(t.args.state)}` : ''}`);
    expect(before).toEqual(['assert', 'deploy_preflight', 'redfish_power:off']);
    // one preflight task; preflight_on_failure: stop makes it fatal for the play
    const pre = tasks(play?.roleTasks ?? []).filter((t) => t.module === 'deploy_preflight');
    expect(pre.map((t) => t.anyErrorsFatal)).toEqual(["{{ eq preflight_on_failure 'stop' }}"]);
    const all = tasks([...(play?.roleTasks ?? []), ...(play?.tasks ?? [])]);
    const wait = all.find((t) => t.module === 'wait_agent');
    expect(wait?.resume).toBe('rerun');
    expect(all.find((t) => t.module === 'root_device')?.register).toBe('root');
    expect(all.find((t) => t.module === 'bootc_install')?.args.device).toBe('{{ root.device }}');
    expect(all.find((t) => t.module === 'configdrive_write')?.args.device).toBe('{{ root.device }}');
  });

  it('undeploy.yml checks, powers off, erases the hinted root disk from the ramdisk, then ejects and clears the override', () => {
    const play = loadPlaybook(UNDEPLOY).plays[0];
    const steps = tasks([...(play?.roleTasks ?? []), ...(play?.tasks ?? [])]).map(
      (t) => `${t.module}${t.args.state ? `:${String(t.args.state)}` : ''}${t.args.device ? `:${String(t.args.device)}` : ''}`,
    );
    expect(steps).toEqual([
      'assert',
      'deploy_preflight',
      'redfish_power:off',
      'vmedia_boot:inserted',
      'redfish_power:on',
      'wait_agent',
      'root_device',
      'erase_disk_metadata:{{ root.device }}',
      'redfish_power:off',
      'redfish_power:off',
      'vmedia_boot:ejected',
      'kickstart_media:ejected',
      'fail',
      'vmedia_boot:ejected',
      'redfish_boot_device:none',
    ]);
  });

  it('deploy-anaconda.yml checks first, attaches the kickstart before booting the installer, waits for it, then finishes as the others do', async () => {
    const file = path.join(root, 'playbooks/deploy-anaconda.yml');
    const errors = await collectValidationErrors([file], { inventory: [LAB] });
    expect(errors.map((e) => e.oneLine())).toEqual([]);
    const play = loadPlaybook(file).plays[0];
    expect(play?.roles.map((r) => r.name)).toEqual(['preflight', 'power-off']);
    expect(play?.vars.cleanup_kickstart_media).toBe(true);
    const pre = tasks(play?.roleTasks ?? []).filter((t) => t.module === 'deploy_preflight');
    expect(pre.map((t) => t.args.deploy)).toEqual(['{{ preflight_deploy }}']);
    expect(play?.roleTasks[0]?.vars).toEqual({ preflight_deploy: 'anaconda' });
    const block = play?.tasks[0];
    if (block?.kind !== 'block') throw new Error('the deploy steps are one block');
    expect(tasks(block.block).map((t) => `${t.module}${t.args.state ? `:${String(t.args.state)}` : ''}`)).toEqual([
      'kickstart_media',
      'installer_boot',
      'vmedia_boot:inserted',
      'redfish_power:on',
      'anaconda_wait',
      'vmedia_boot:ejected',
      'kickstart_media:ejected',
      'redfish_boot_device',
      'redfish_power:cycle',
      'wait_agent',
    ]);
    expect(tasks(block.rescue).map((t) => t.module)).toEqual(['redfish_power', 'vmedia_boot', 'kickstart_media', 'fail']);
  });
});
