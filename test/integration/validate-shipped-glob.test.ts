// The exact command: `tsbm validate playbooks/*.yml -i inventory-examples/*.yml`, with the
// shell expanding both globs (so -i is followed by several files).
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

it('validates every shipped playbook against every shipped inventory example', async () => {
  // Exit 4: deploy-ramdisk.yml needs instance_info.boot_iso, which no example gives (checked in
  // validate-cli.test.ts); what matters here is that both globs are read whole.
  const r = await promisify(execFile)(
    'sh',
    ['-c', 'node bin/tsbm.js validate playbooks/*.yml -i inventory-examples/*.yml; echo "exit $?"'],
    { cwd: ROOT },
  );
  expect(r.stderr).toMatch(/1 error in \d+ playbooks/);
  expect(r.stdout).toMatch(/deploy-ramdisk|boot-instance-iso/);
  expect(r.stdout).toMatch(/for hosts node1, node2, node01 and 2 more/); // both inventories' hosts
  expect(r.stdout.trim().split('\n').pop()).toBe('exit 4');
}, 60_000);
