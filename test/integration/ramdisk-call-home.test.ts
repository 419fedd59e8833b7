// Nodes call home: ramdisk_media puts the node's own TSBM-NODE volume (the controller's public
// key, the run's callback URL and a token for this node and run) in the fake BMC's second
// virtual media slot; an in-process stand-in for the ramdisk's call-home script reads that volume
// from the URL the BMC was given, POSTs its report (addresses, MACs, UUID, SSH host key), and
// wait_agent, on a host with no ssh_host, connects to the reported address accepting only the
// reported key (known_hosts stays empty: no accept-new). A ramdisk whose SSH key is not the one
// reported fails at once; a wrong token is refused.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeBmc, type FakeBmc } from '../../packages/lab/src/bmc/server.js';
import { readIsoFiles, isoVolumeId } from '../../src/configdrive/iso9660-read.js';
import { generateKey, type SshHost, startSshHost } from '../helpers/ssh-host.js';
import { runYaml } from '../helpers/run-yaml.js';
import { MOCKUPS } from './redfish-helpers.js';

const HPE = join(MOCKUPS, 'hpe-ilo5-dl325-gen10plus');
const open: Array<{ close(): Promise<void> }> = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function inventory(bmc: FakeBmc, h: SshHost, knownHosts: string): string {
  return `all:
  hosts:
    node1:
      driver_info:
        redfish_address: ${bmc.url}
        redfish_username: admin
        redfish_password: S3cret-pass!
        redfish_verify_ca: false
      ssh_port: ${h.spec.port}
      ssh_user: ${h.spec.user}
      ssh_private_key_file: ${h.spec.privateKeyFile}
      ssh_known_hosts_file: ${knownHosts}
      tsbm_http_address: 127.0.0.1
`;
}

const PLAYBOOK = `- hosts: node1
  gather_facts: false
  tasks:
    - name: Attach the node volume
      ramdisk_media: {}
    - name: Wait for the ramdisk
      wait_agent:
        timeout: 60
        identity: "off"
    - name: Work on it
      command: echo on-the-ramdisk
`;

/** The ramdisk's side: waits for the volume in the BMC's second slot, reads it, calls home. */
async function ramdiskStandIn(bmc: FakeBmc, hostKey: string, seen: { files?: Map<string, string>; wrongTokenStatus?: number; status?: number }): Promise<void> {
  let url: string | undefined;
  for (let i = 0; i < 600 && !url; i++) {
    url = bmc.state.insertedMedia().find((m) => m.image.includes('/files/'))?.image;
    if (!url) await new Promise((r) => setTimeout(r, 100));
  }
  if (!url) throw new Error('no volume was inserted');
  const iso = Buffer.from(await (await fetch(url)).arrayBuffer());
  if (isoVolumeId(iso) !== 'TSBM-NODE') throw new Error(`volume label ${isoVolumeId(iso)}`);
  const files = new Map(readIsoFiles(iso).map((f) => [f.path, f.data.toString('utf8')]));
  seen.files = files;
  const callback = files.get('callback_url')!.trim();
  const report = JSON.stringify({
    version: 1,
    system_uuid: null,
    host_keys: [hostKey.split(' ').slice(0, 2).join(' ')],
    ip_addr: [
      { ifname: 'lo', link_type: 'loopback', address: '00:00:00:00:00:00', addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8, scope: 'host' }] },
      { ifname: 'eth0', link_type: 'ether', address: '52:54:00:12:34:56', addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8, scope: 'global' }, { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' }] },
    ],
  });
  const post = (token: string) => fetch(callback, { method: 'POST', headers: { 'X-Tsbm-Token': token, 'Content-Type': 'application/json' }, body: report });
  seen.wrongTokenStatus = (await post('not-the-token')).status;
  seen.status = (await post(files.get('token')!)).status;
}

async function setUp() {
  const bmc = await startFakeBmc({ mockupDir: HPE, password: 'S3cret-pass!' });
  open.push(bmc);
  const h = await startSshHost({ name: 'node1' });
  open.push(h);
  const dir = mkdtempSync(join(tmpdir(), 'tsbm-call-home-'));
  dirs.push(dir);
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, '');
  writeFileSync(`${h.spec.privateKeyFile}.pub`, `${h.clientPublicKey}\n`);
  return { bmc, h, knownHosts };
}

describe('nodes call home', () => {
  it('wait_agent without ssh_host connects where the ramdisk reported and pins its key; later tasks use that connection', async () => {
    const { bmc, h, knownHosts } = await setUp();
    const seen: Parameters<typeof ramdiskStandIn>[2] = {};
    const [r] = await Promise.all([runYaml(inventory(bmc, h, knownHosts), PLAYBOOK), ramdiskStandIn(bmc, h.hostPublicKey, seen)]);
    expect(r.result('node1', 'Attach the node volume')).toMatchObject({ status: 'changed' });
    expect(r.result('node1', 'Attach the node volume')?.msg).toMatch(/inserted the TSBM-NODE volume in \S+; the ramdisk calls home/);
    // The volume: the controller's public key, the callback, the token; no network_data without one.
    expect(seen.files?.get('authorized_keys')).toBe(`${h.clientPublicKey}\n`);
    expect(seen.files?.get('callback_url')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/agent\/[0-9a-f]{24}\n$/);
    expect(seen.files?.get('token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(seen.files?.has('network.conf')).toBe(false);
    expect(seen.wrongTokenStatus).toBe(403);
    expect(seen.status).toBe(200);
    const wait = r.result('node1', 'Wait for the ramdisk');
    expect(wait?.status).toBe('ok');
    expect(wait?.msg).toMatch(/^the ramdisk called home after \d+s; SSH at 127\.0\.0\.1 \(its reported key\) answered after \d+s/);
    expect(JSON.stringify(wait)).toMatch(/"host_key_fingerprint":"SHA256:/);
    expect(r.result('node1', 'Work on it')?.status).toBe('changed');
    expect(h.commands.some((c) => c.includes('echo on-the-ramdisk'))).toBe(true);
    expect(r.code).toBe(0);
    // The token never reaches output.
    expect(JSON.stringify(r.events)).not.toContain(seen.files!.get('token')!);
  }, 120_000);

  it('a server at the reported address whose key is not the reported one fails at once; nothing runs there', async () => {
    const { bmc, h, knownHosts } = await setUp();
    const seen: Parameters<typeof ramdiskStandIn>[2] = {};
    const t0 = Date.now();
    const [r] = await Promise.all([runYaml(inventory(bmc, h, knownHosts), PLAYBOOK), ramdiskStandIn(bmc, generateKey().public, seen)]);
    const wait = r.result('node1', 'Wait for the ramdisk');
    expect(wait?.status).toBe('failed');
    expect(wait?.msg).toMatch(/the SSH server at 127\.0\.0\.1 is not the ramdisk that called home, so nothing was run on it: host key mismatch .*the server presented SHA256:\S+, but the ramdisk reported SHA256:/);
    expect(Date.now() - t0).toBeLessThan(45_000);
    expect(h.commands).toEqual([]);
  }, 120_000);
});
