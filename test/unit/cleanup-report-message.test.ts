// The deploy rescue's last task says what was done about the failed node. It may say "powered
// off" and "ejected" only of what this run's cleanup tasks did and read back: a skipped task (a
// resume that counted it done, a condition) is not evidence.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderText } from '../../src/template/index.js';

const file = join(import.meta.dirname, '../../playbooks/roles/cleanup-on-failure/tasks/main.yml');
const tasks = parse(readFileSync(file, 'utf8')) as Array<{ name: string; fail?: { msg: string } }>;
const msg = tasks.find((t) => t.name === 'Report the failure')!.fail!.msg;

const report = (vars: Record<string, unknown>) =>
  renderText(msg, {
    vars: { on_deploy_failure: 'power_off', tsbm_failed_task: { name: 'Pull the image' }, tsbm_failed_result: { msg: 'boom' }, ...vars },
    baseDir: '.',
    pos: { file, line: 1, col: 1 },
    task: 'Report the failure',
    host: 'node01',
  });

describe('the failure report of the deploy rescue', () => {
  it('says powered off and ejected when this run read the node Off and ran the eject', () => {
    const r = report({ cleanup_power: { changed: true, failed: false, power_state: 'Off' }, cleanup_eject: { changed: true, failed: false, media_slot: '/redfish/v1/Managers/1/VirtualMedia/CD' } });
    expect(r).toMatch(/^node powered off, virtual media ejected \(on_deploy_failure: power_off\) after "Pull the image" failed: boom$/);
  });

  it('does not say powered off or ejected when the cleanup tasks were skipped', () => {
    const r = report({ cleanup_power: { skipped: true, changed: false, failed: false, msg: 'skipped: done in the resumed run' }, cleanup_eject: { skipped: true, changed: false, failed: false } });
    expect(r).not.toMatch(/powered off|media ejected/);
    expect(r).toMatch(/^the node was not confirmed Off \(skipped: done in the resumed run\), the media were not confirmed ejected/);
  });

  it('names a failed power-off', () => {
    const r = report({ cleanup_power: { failed: true, msg: 'HTTP 500' }, cleanup_eject: { changed: false, failed: false, media_slot: '/x' } });
    expect(r).toMatch(/^powering the node off FAILED \(HTTP 500\), virtual media ejected/);
  });
});
