// One e2e "machine": a namespace with real sshd (or dropbear) as its ramdisk, a loop disk, and
// the fake Redfish BMC whose power-on from virtual CD starts that server and power-off stops it.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FakeBmc, startFakeBmc } from '../../../packages/lab/src/bmc/server.js';
import type { PowerDelay } from '../../../packages/lab/src/bmc/state.js';
import { type LoopDisk, createLoopDisk } from './loopdisk.js';
import { type Netns, createNetns } from './netns.js';
import { prepareDropbear } from './dropbear.js';
import { repoRoot } from './run.js';
import { type Sshd, prepareSshd } from './sshd.js';

const MOCKUP = join(repoRoot(), 'packages/lab/mockups/dmtf-public-rackmount1');

export interface BmcNode {
  name: string;
  ns: Netns;
  sshd: Sshd;
  disk: LoopDisk;
  bmc: FakeBmc;
  caFile: string;
  uuid: string;
  /** Every boot the BMC performed: 'cd' (ramdisk started), 'disk', or 'none'. */
  boots: string[];
}

export interface BmcNodeOptions {
  dir: string;
  index: number;
  diskBytes: number;
  authorizedKey: string;
  bmcUser: string;
  bmcPassword: string;
  /** The MAC the BMC reports; default: the namespace's real one. */
  bmcMac?: string;
  /** The product_uuid the ramdisk shows; default: the System UUID its BMC reports. */
  ramdiskUuid?: string;
  /** The ramdisk never comes up (firmware hangs). */
  neverBoots?: boolean;
  /**
   * The ramdisk's SSH server: OpenSSH with SFTP (default), OpenSSH without a `Subsystem sftp`
   * line, or dropbear (no sftp-server, as on minimal ramdisks).
   */
  ramdisk?: 'openssh' | 'openssh-nosftp' | 'dropbear';
  /** How long the BMC's power changes take (default: at once). */
  powerDelayMs?: PowerDelay;
  /** More environment for the ramdisk's SSH sessions (OpenSSH ramdisks). */
  ramdiskEnv?: Record<string, string>;
}

export async function startBmcNode(name: string, o: BmcNodeOptions): Promise<BmcNode> {
  const ns = createNetns(name, o.index);
  const uuid = randomUUID().toUpperCase();
  const server = { logCommands: true, productUuid: o.ramdiskUuid ?? uuid };
  const sshd =
    o.ramdisk === 'dropbear'
      ? prepareDropbear(ns, join(o.dir, `${name}-dropbear`), [o.authorizedKey], server)
      : prepareSshd(ns, join(o.dir, `${name}-sshd`), [o.authorizedKey], {
          ...server,
          sftp: o.ramdisk !== 'openssh-nosftp',
          ...(o.ramdiskEnv ? { env: o.ramdiskEnv } : {}),
        });
  const disk = createLoopDisk(o.diskBytes);
  const boots: string[] = [];
  const bmc = await startFakeBmc({
    mockupDir: MOCKUP,
    host: '127.0.0.1',
    username: o.bmcUser,
    password: o.bmcPassword,
    ...(o.powerDelayMs !== undefined ? { powerDelayMs: o.powerDelayMs } : {}),
    hooks: {
      onPower: (s) => {
        if (s === 'Off') sshd.stop();
      },
      onBoot: (info) => {
        const cd =
          (info.bootSourceOverrideTarget === 'Cd' || info.bootSourceOverrideTarget === 'UsbCd') &&
          info.mediaInserted;
        boots.push(cd ? 'cd' : info.bootSourceOverrideTarget === 'Hdd' ? 'disk' : 'none');
        if (cd && !o.neverBoots) sshd.start();
      },
    },
  });
  const sys = bmc.state.system;
  sys.UUID = uuid;
  sys.PowerState = 'Off';
  for (const [path, body] of bmc.state.tree) {
    if (
      path.startsWith(`${bmc.state.systemPath}/EthernetInterfaces/`) &&
      typeof body.MACAddress === 'string'
    ) {
      body.MACAddress = o.bmcMac ?? ns.mac;
      if ('PermanentMACAddress' in body) body.PermanentMACAddress = o.bmcMac ?? ns.mac;
    }
  }
  const caFile = join(o.dir, `${name}-bmc-ca.pem`);
  writeFileSync(caFile, bmc.caCertPem);
  return { name, ns, sshd, disk, bmc, caFile, uuid, boots };
}
