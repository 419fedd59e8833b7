// The exact command: `tsbm validate playbooks/*.yml -i inventory-examples/*.yml`, with the
// shell expanding both globs (so -i is followed by several files).
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

it('validates every shipped playbook against every shipped inventory example', async () => {
  const r = await promisify(execFile)('sh', ['-c', 'node bin/tsbm.js validate playbooks/*.yml -i inventory-examples/*.yml'], {
    cwd: ROOT,
  });
  expect(r.stderr + r.stdout).toMatch(/ok \(\d+ playbooks\)/);
}, 60_000);
