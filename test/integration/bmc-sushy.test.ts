// The fake BMC checked with an independent client: Debian's python3-sushy drives power,
// boot override and virtual media against it, so the fake is not shaped only to our client.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeBmc, startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import { MOCKUPS } from './redfish-helpers.js';

const run = promisify(execFile);
// requests lets REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE override the CA sushy passes; keep them out.
const pyEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/CA_BUNDLE|SSL_CERT/.test(k)));
const PY = '/usr/bin/python3';
const hasSushy = existsSync(PY) && (await run(PY, ['-c', 'import sushy']).then(() => true, () => false));

const SCRIPT = `
import json, sys, time, warnings
warnings.filterwarnings('ignore')
import sushy
url, ca, sys_path, auth_kind = sys.argv[1:5]
auth = sushy.auth.BasicAuth('admin', 'pw') if auth_kind == 'basic' else sushy.auth.SessionAuth('admin', 'pw')
root = sushy.Sushy(url + '/redfish/v1', verify=ca, auth=auth)
s = root.get_system(sys_path)
out = {'power0': str(s.power_state)}
s.reset_system(sushy.RESET_FORCE_OFF)
s.refresh(); out['power1'] = str(s.power_state)
s.reset_system(sushy.RESET_ON)
s.refresh(); out['power2'] = str(s.power_state)
s.set_system_boot_options(sushy.BOOT_SOURCE_TARGET_CD, enabled=sushy.BOOT_SOURCE_ENABLED_ONCE)
s.refresh(); out['boot'] = [str(s.boot.target), str(s.boot.enabled)]
mgr = s.managers[0]
vm = [m for m in mgr.virtual_media.get_members() if 'cd' in [str(t).lower().split('.')[-1] for t in m.media_types]][0]
vm.insert_media('http://images.example/ramdisk.iso', inserted=True, write_protected=True)
vm.refresh(); out['inserted'] = [vm.image, vm.inserted]
vm.eject_media()
vm.refresh(); out['ejected'] = [vm.image, vm.inserted]
print(json.dumps(out))
`;

describe.skipIf(!hasSushy)('fake BMC against python3-sushy', () => {
  let bmc: FakeBmc;
  let dir: string;
  beforeAll(async () => {
    bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, password: 'pw', requireEtag: true });
    dir = mkdtempSync(join(tmpdir(), 'tsbm-sushy-'));
    writeFileSync(join(dir, 'ca.pem'), bmc.caCertPem);
    writeFileSync(join(dir, 'drive.py'), SCRIPT);
  });
  afterAll(async () => {
    await bmc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const auth of ['session', 'basic'] as const) {
    it(`power off/on, boot override Cd once, virtual media insert/eject (${auth} auth, CA verified, ETags required)`, async () => {
      const sessionsBefore = bmc.openSessions().length;
      const { stdout } = await run(PY, [join(dir, 'drive.py'), bmc.url, join(dir, 'ca.pem'), '/redfish/v1/Systems/1', auth], { timeout: 60_000, env: pyEnv });
      const out = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
      expect(String(out.power1)).toMatch(/off/i);
      expect(String(out.power2)).toMatch(/on/i);
      expect((out.boot as string[])[0]).toMatch(/cd/i);
      expect((out.boot as string[])[1]).toMatch(/once/i);
      expect(out.inserted).toEqual(['http://images.example/ramdisk.iso', true]);
      expect((out.ejected as unknown[])[1]).toBe(false);
      expect(bmc.state.resets.slice(-2)).toEqual(['ForceOff', 'On']);
      // sushy keeps its session open until the process ends; Basic auth opens none.
      expect(bmc.openSessions().length - sessionsBefore).toBe(auth === 'session' ? 1 : 0);
    });
  }
});

if (!hasSushy) it.skip('fake BMC against python3-sushy: SKIPPED because /usr/bin/python3 cannot import sushy', () => {});
