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

  it("deploy-bootc.yml runs the steps in Ironic's order", () => {
    const pb = loadPlaybook(DEPLOY);
    const play = pb.plays[0];
    expect(play?.roles.map((r) => r.name)).toEqual([
      'power-off',
      'boot-ramdisk',
      'wait-agent',
      'discover',
      'deploy',
      'configure',
      'finish',
    ]);
    const steps = tasks(play?.roleTasks ?? []).map(
      (t) => `${t.module}${t.args.state ? `:${String(t.args.state)}` : ''}`,
    );
    expect(steps).toEqual([
      'redfish_power:off',
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
    const all = tasks(play?.roleTasks ?? []);
    const wait = all.find((t) => t.module === 'wait_agent');
    expect(wait?.resume).toBe('rerun');
    expect(all.find((t) => t.module === 'root_device')?.register).toBe('root');
    expect(all.find((t) => t.module === 'bootc_install')?.args.device).toBe('{{ root.device }}');
    expect(all.find((t) => t.module === 'configdrive_write')?.args.device).toBe('{{ root.device }}');
  });

  it('undeploy.yml powers off, then ejects', () => {
    const play = loadPlaybook(UNDEPLOY).plays[0];
    const steps = [...tasks(play?.roleTasks ?? []), ...tasks(play?.tasks ?? [])].map(
      (t) => `${t.module}:${String(t.args.state)}`,
    );
    expect(steps).toEqual(['redfish_power:off', 'vmedia_boot:ejected']);
  });
});
