// Node data that reads the controller's environment (`{{ env "BMC_PASSWORD" }}`, as
// `tsbm inventory import --from-ironic` writes it) when the variable is not exported: the task
// that reads it fails naming the variable, and the BMC is never sent the template's text as a
// password (a wrong login counts towards a BMC's lockout). A module that scans every variable
// for a registered result still finds it past a variable that cannot be rendered.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lazyVars } from '../../src/executor/lazy-vars.js';
import { type FakeBmc, startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import { runEvents } from '../helpers/run-events.js';
import { scratchDirs } from '../helpers/scratch.js';
import { MOCKUPS } from './redfish-helpers.js';

const scratch = scratchDirs();
const UNSET = 'TSBM_TEST_NEVER_SET_BMC_PASSWORD';
const bmcs: FakeBmc[] = [];
afterEach(async () => {
  for (const b of bmcs.splice(0)) await b.close();
});

const run = (dir: string) => runEvents({ playbook: path.join(dir, 'site.yml'), inventories: [path.join(dir, 'inventory.yml')], verbosity: 0 });

describe('an environment variable the node data needs is not set', () => {
  it('the task reading it fails naming the variable; the BMC gets no login with the template text', async () => {
    expect(process.env[UNSET]).toBeUndefined();
    const dir = scratch('tsbm-unset-env-');
    const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/dmtf-public-rackmount1`, password: 'pw' });
    bmcs.push(bmc);
    const ca = path.join(dir, 'ca.pem');
    writeFileSync(ca, bmc.caCertPem);
    writeFileSync(
      path.join(dir, 'inventory.yml'),
      `nodes:
  hosts:
    node1:
      connection: local
      driver_info:
        redfish_address: ${bmc.url}
        redfish_username: admin
        redfish_password: '{{ env "${UNSET}" }}'
        redfish_verify_ca: ${ca}
`,
    );
    writeFileSync(
      path.join(dir, 'site.yml'),
      `- hosts: nodes
  gather_facts: false
  tasks:
    - name: Power off
      redfish_power: { state: "off" }
`,
    );
    const r = await run(dir);
    const result = r.events.find((e) => e.type === 'host_result' && e.host === 'node1') as { status?: string; msg?: string } | undefined;
    expect(result?.status).toBe('failed');
    expect(result?.msg).toMatch(new RegExp(`environment variable ${UNSET} is not set`));
    expect(r.code).toBe(2);
    // Nothing went to the BMC: no session, no request carrying '{{ env ... }}' as a password.
    expect(bmc.requestCount()).toBe(0);
  }, 60_000);

  it('a direct read fails; a scan over every variable skips the one that cannot be rendered', () => {
    expect(process.env[UNSET]).toBeUndefined();
    const vars = lazyVars(
      { driver_info: { redfish_password: `{{ env "${UNSET}" }}` }, root: { device: '/dev/sda', size_mib: 1024, reason: 'x' }, later: '{{ not_yet_defined }}' },
      { host: 'node1', baseDir: '/' },
      { lenient: true },
    );
    expect(() => vars.driver_info).toThrow(new RegExp(`environment variable ${UNSET} is not set`));
    expect(Object.values(vars)).toContainEqual({ device: '/dev/sda', size_mib: 1024, reason: 'x' });
    // A variable that only refers to one not defined yet still reads as its text (lenient).
    expect(vars.later).toBe('{{ not_yet_defined }}');
  });
});
