// deploy-anaconda.yml end to end on the simulated lab: nodes boot the lab's installer ISO with
// the kickstart on an OEMDRV volume in their second virtual media slot (a USB stick slot on the
// iLO tree, a second CD on the DMTF one), the simulated installer runs it (its %pre, %post and
// %onerror call back tsbm over HTTP with curl), lays out the disk, installs the source, powers
// off, and tsbm boots the disk. Also: liveimg and install trees, a kickstart the installer cannot
// honour, no disk matching the hints, the installer faults (an install error, an installer that
// never calls back, a wrong token), a template refused before anything is powered, and a BMC
// with one virtual media slot (refused, then installed from inst.ks= with instance_info.ks_url).
// And the installer as files (instance_info kernel, ramdisk, stage2): tsbm builds a UEFI boot ISO,
// the nodes boot its El Torito entry as firmware does (a stage2 that does not answer: no install).
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TsbmEvent } from '../../src/output/events.js';
import { buildInstallerIso, SIM_INSTALLER_FILES } from '../../packages/lab/src/installer/installer-iso.js';
import { readDiskLayout } from '../../packages/lab/src/lab/disk-layout.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { MOCKUPS_DIR } from '../../packages/lab/src/lab/package-paths.js';
import { type ImageServer, serveFiles } from '../helpers/image-fixture.js';
import { resultsOf, runEvents } from '../helpers/run-events.js';
import { scratchDirs } from '../helpers/scratch.js';

const PLAYBOOK = path.resolve(import.meta.dirname, '../../playbooks/deploy-anaconda.yml');
const WAIT = 'Wait for the installer';
const PREFLIGHT = 'Check the node before touching it (BMC, image, ISO)';
const scratch = scratchDirs();

let dir: string;
let lab: Lab;
let files: ImageServer;
let tarball: string;
let tarSha: string;

beforeAll(async () => {
  dir = scratch('tsbm-anaconda-sim-');
  tarball = path.join(dir, 'os.tar.gz');
  writeFileSync(tarball, randomBytes(3 * 1024 * 1024));
  tarSha = createHash('sha256').update(readFileSync(tarball)).digest('hex');
  mkdirSync(path.join(dir, 'tree'));
  writeFileSync(path.join(dir, 'tree', '.treeinfo'), '[general]\nname = test tree\n[stage2]\nmainimage = images/install.img\n');
  files = await serveFiles([tarball, path.join(dir, 'tree', '.treeinfo')]);
  lab = await startLab({
    nodes: 3,
    dir: path.join(dir, 'lab'),
    bootDelayMs: 200,
    powerDelayMs: 50,
    diskGiB: 8,
    mockups: ['hpe-ilo5-dl325-gen10plus', 'dmtf-public-rackmount1'],
  });
}, 60_000);

afterAll(async () => {
  await lab?.close();
  await files?.close();
});

type Doc = { all: { vars: Record<string, unknown>; children: { sim: { hosts: Record<string, Record<string, unknown>> } } } };

function inventory(l: Lab, name: string, info: Record<string, unknown> = {}, vars: Record<string, unknown> = {}, perHost: Record<string, Record<string, unknown>> = {}): string {
  const doc = parse(readFileSync(l.inventory, 'utf8')) as Doc;
  Object.assign(doc.all.vars.instance_info as Record<string, unknown>, info);
  // The test's images and templates live in its temp directory (docs/security.md).
  Object.assign(doc.all.vars, { tsbm_file_url_allowed_paths: [dir] }, vars);
  for (const [h, v] of Object.entries(perHost)) {
    const host = doc.all.children.sim.hosts[h]!;
    for (const [k, val] of Object.entries(v)) host[k] = k === 'instance_info' ? { ...(doc.all.vars.instance_info as object), ...(val as object) } : val;
  }
  const file = path.join(dir, `${name}.yml`);
  writeFileSync(file, stringify(doc));
  return file;
}

async function run(inv: string, extraVars: Record<string, unknown> = {}): Promise<{ code: number; events: TsbmEvent[]; text: string }> {
  const { code, events } = await runEvents({ playbook: PLAYBOOK, inventories: [inv], extraVars, forks: 10 });
  return { code, events, text: JSON.stringify(events) };
}


function lastFailure(events: TsbmEvent[], host: string): string {
  const f = events.filter((e) => e.type === 'host_result' && e.host === host && e.status === 'failed').at(-1);
  return f?.type === 'host_result' ? (f.msg ?? '') : '';
}

function installed(l: Lab, i: number): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(l.nodes[i]!.root, 'sim', 'installed.json'), 'utf8')) as Record<string, unknown>;
}

function zeroDisks(l: Lab): void {
  for (const n of l.nodes) {
    truncateSync(n.diskFile, 0);
    truncateSync(n.diskFile, l === lab ? 8 * 1024 ** 3 : 20 * 1024 ** 3);
  }
}

function anyMediaInserted(l: Lab, i: number): boolean {
  return l.nodes[i]!.bmc!.state.insertedMedia().some((m) => /tsbm-sim-installer|\/files\//.test(m.image));
}

describe('deploy-anaconda.yml on the simulated lab', () => {
  it('installs a bootc image with ostreecontainer on three nodes (iLO and DMTF trees), callbacks over HTTP, then boots the disk', async () => {
    const { code, events, text } = await run(inventory(lab, 'oci'), { wait_for_instance: true });
    const w = resultsOf(events, WAIT);
    expect(Object.values(w).map((r) => r.status), JSON.stringify(w)).toEqual(['changed', 'changed', 'changed']);
    expect(code).toBe(0);
    const media = resultsOf(events, 'Attach the kickstart');
    expect(media.node01?.result.media_slot).toBe('/redfish/v1/Managers/1/VirtualMedia/1'); // iLO: the USB stick slot
    expect(media.node02?.result.media_slot).toBe('/redfish/v1/Systems/437XR1138R2/VirtualMedia/CD2'); // DMTF: the second CD
    const secret = Buffer.from(lab.nodes[0]!.cfg.registryAuth).toString('base64');
    for (let i = 0; i < 3; i++) {
      const n = lab.nodes[i]!;
      const rec = installed(lab, i);
      expect(rec).toMatchObject({
        result: 'installed',
        source: { kind: 'ostreecontainer', url: 'registry.sim.tsbm:5000/tsbm/bootc-demo:latest', transport: 'registry' },
        rootLocked: true,
        // Fetched once onto the installer's tmpfs with 0600, gone after %post.
        authFileMode: '0600',
        pullSecretLeft: false,
        end: 'poweroff',
      });
      expect(String(rec.from)).toMatch(/^OEMDRV volume http:\/\/127\.0\.0\.1:\d+\/files\//);
      // Whoever has the volume's URL can read the token: it is not printed either.
      expect(text).not.toContain(String(rec.from).slice('OEMDRV volume '.length));
      expect((await readDiskLayout(n.diskFile)).partitions.map((p) => p.name)).toEqual(['EFI System Partition', 'boot', 'root']);
      // Booted from disk: both media ejected, persistent override, the instance answering SSH.
      expect(n.phase).toBe('instance');
      expect(anyMediaInserted(lab, i)).toBe(false);
      expect(n.bmc!.state.boot).toMatchObject({ BootSourceOverrideTarget: 'Hdd', BootSourceOverrideEnabled: 'Continuous' });
      // The config drive and root's key, as the instance sees them.
      const inst = path.join(n.cfg.dir, 'instance');
      expect(readFileSync(path.join(inst, 'var/lib/cloud/seed/config_drive/openstack/latest/user_data'), 'utf8')).toBe(`#cloud-config\nhostname: ${n.cfg.name}\n`);
      expect(readFileSync(path.join(inst, 'root/.ssh/authorized_keys'), 'utf8')).toContain('ssh-ed25519 ');
      // The node's token (the simulated installer kept its scripts) appears in no event.
      const token = /X-Tsbm-Token: ([A-Za-z0-9_-]+)/.exec(readFileSync(path.join(n.root, 'tmp', 'ks-script-pre-0.sh'), 'utf8'))?.[1];
      expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
      expect(text).not.toContain(token);
    }
    expect(text).not.toContain(secret);
    expect(text).not.toContain(lab.nodes[0]!.cfg.registryAuth);
    // Progress while waiting, with the elapsed time.
    expect(events.some((e) => e.type === 'progress' && e.task === WAIT && e.unit === 's' && /installer: (waiting|installing)/.test(e.message))).toBe(true);
    expect(w.node01?.msg).toMatch(/^installed in \d+s \(started after \d+s\) on \/dev\/vda; the installer powered the node off$/);
    expect(resultsOf(events, 'Wait for the installed system to answer SSH').node01?.status).toBe('ok');
  }, 180_000);

  it('liveimg from a tarball (sha256 checked by the installer), an install tree, and a file:// image served by tsbm', async () => {
    zeroDisks(lab);
    const [a, b, c] = lab.nodes.map((n) => n.cfg.name);
    const before = files.downloads('os.tar.gz');
    const { code, events } = await run(
      inventory(lab, 'live', {}, {}, {
        [a!]: { instance_info: { image_source: `${files.url}/os.tar.gz`, image_os_hash_value: tarSha } },
        [b!]: { instance_info: { image_source: `${files.url}/` } },
        [c!]: { instance_info: { image_source: `file://${tarball}` } },
      }),
    );
    expect(code, JSON.stringify(resultsOf(events, WAIT))).toBe(0);
    expect(installed(lab, 0)).toMatchObject({ result: 'installed', source: { kind: 'liveimg', url: `${files.url}/os.tar.gz`, checksum: tarSha, bytes: 3 * 1024 * 1024 } });
    expect(installed(lab, 1)).toMatchObject({ result: 'installed', source: { kind: 'url', url: `${files.url}/` } });
    expect(installed(lab, 2)).toMatchObject({ result: 'installed', source: { kind: 'liveimg', bytes: 3 * 1024 * 1024 } });
    expect(String((installed(lab, 2).source as { url: string }).url)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/[0-9a-f]+\/os\.tar\.gz$/);
    expect(files.downloads('os.tar.gz') - before).toBe(1);
    // No pull secret for these: the kickstart never asks for one.
    expect(readFileSync(path.join(lab.nodes[0]!.root, 'tmp', 'ks-script-pre-0.sh'), 'utf8')).not.toContain('pull-secret');
  }, 180_000);

  it('the installer served as files: tsbm builds a UEFI boot ISO (El Torito, the ESP of driver_info.bootloader) with inst.stage2=, the node boots it and installs; both forms at once are refused', async () => {
    zeroDisks(lab);
    const [a, b, c] = lab.nodes.map((n) => n.cfg.name);
    const origin = new URL(String((parse(readFileSync(lab.inventory, 'utf8')) as Doc).all.vars.installer_iso)).origin;
    const stage2File = path.join(dir, 'install.img');
    writeFileSync(stage2File, 'stage2 served by tsbm\n');
    const resetsBefore = lab.nodes[2]!.bmc!.state.resets.length;
    const filesForm = { kernel: `${origin}${SIM_INSTALLER_FILES.kernel}`, ramdisk: `${origin}${SIM_INSTALLER_FILES.ramdisk}`, stage2: `${origin}${SIM_INSTALLER_FILES.stage2}` };
    const { code, events, text } = await run(
      inventory(lab, 'files', {}, { driver_info: { bootloader: `${origin}${SIM_INSTALLER_FILES.bootloader}` } }, {
        [a!]: { installer_iso: '', instance_info: { ...filesForm, kernel_append_params: 'console=ttyS0,115200' } },
        // A stage2 on the controller: tsbm serves it, the URL (with its token) only on the command line.
        [b!]: { installer_iso: '', instance_info: { ...filesForm, stage2: stage2File } },
        // installer_iso (the lab's, from the group) and the files form: refused before anything is touched.
        [c!]: { instance_info: filesForm },
      }),
    );
    expect(code, JSON.stringify(resultsOf(events, WAIT))).toBe(2);
    const chosen = resultsOf(events, "Choose the installer's boot ISO");
    expect(chosen[a!]?.result).toMatchObject({ form: 'files', kernel_args: [`inst.stage2=${filesForm.stage2}`, 'console=ttyS0,115200'] });
    expect(chosen[a!]?.msg).toMatch(/^built the installer boot ISO from .* with the bootloader of http/);
    expect(installed(lab, 0)).toMatchObject({ result: 'installed', boot: { via: 'el-torito', stage2: filesForm.stage2, args: [`inst.stage2=${filesForm.stage2}`, 'console=ttyS0,115200'] } });
    expect(String(installed(lab, 0).from)).toMatch(/^OEMDRV volume /);
    const served = (installed(lab, 1).boot as { stage2: string }).stage2;
    expect(installed(lab, 1)).toMatchObject({ result: 'installed', boot: { via: 'el-torito' } });
    expect(served).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/[0-9a-f]+\/install\.img$/);
    expect(text).not.toContain(served.split('/files/')[1]!);
    // The boot ISO went into the CD, served by tsbm like the other media; its URL (whoever has
    // it reads the command line, a served stage2's token included) is not printed.
    expect(resultsOf(events, 'Insert the installer ISO and boot once from it')[a!]?.status).toBe('changed');
    expect(chosen[a!]?.result.iso).toBe('********');
    expect(text).not.toMatch(/boot-[0-9a-f]{24}\.iso/);
    for (const i of [0, 1]) expect(anyMediaInserted(lab, i)).toBe(false);
    const refused = lastFailure(events, c!);
    expect(refused).toMatch(/installer_iso and instance_info\.kernel, instance_info\.ramdisk, instance_info\.stage2 are both set/);
    expect(resultsOf(events, PREFLIGHT)[c!]?.status).toBe('failed');
    expect(anyMediaInserted(lab, 2)).toBe(false);
    expect(lab.nodes[2]!.bmc!.state.resets.length).toBe(resetsBefore);
  }, 180_000);

  it('a built boot ISO whose stage2 does not answer: the installer never starts (dracut cannot fetch it), the wait times out saying so', async () => {
    zeroDisks(lab);
    const [a] = lab.nodes.map((n) => n.cfg.name);
    const origin = new URL(String((parse(readFileSync(lab.inventory, 'utf8')) as Doc).all.vars.installer_iso)).origin;
    const info = { kernel: `${origin}${SIM_INSTALLER_FILES.kernel}`, ramdisk: `${origin}${SIM_INSTALLER_FILES.ramdisk}`, stage2: `${origin}/no-such-tree/images/install.img` };
    const { code, events } = await run(
      inventory(lab, 'files-no-stage2', {}, { driver_info: { bootloader: `${origin}${SIM_INSTALLER_FILES.bootloader}` } }, { [a!]: { installer_iso: '', anaconda_timeout: 4, instance_info: info } }),
    );
    expect(code).toBe(2);
    expect(resultsOf(events, WAIT)[a!]?.msg).toMatch(/did not call back end within 4s: no callback at all/);
    expect(installed(lab, 0)).toEqual({ result: 'stage2 unreachable', from: expect.any(String), stage2: info.stage2 });
    // The other nodes (installer_iso) installed as before.
    expect(installed(lab, 1)).toMatchObject({ result: 'installed' });
    expect(anyMediaInserted(lab, 0)).toBe(false);
  }, 180_000);

  it('a kickstart command the installer cannot honour, and hints no disk matches, fail with the installer’s own lines via %onerror', async () => {
    zeroDisks(lab);
    const [a, b] = lab.nodes.map((n) => n.cfg.name);
    const template = path.join(dir, 'ks-part.hbs');
    writeFileSync(template, readFileSync(path.resolve(import.meta.dirname, '../../playbooks/templates/ks.cfg.hbs'), 'utf8').replace('autopart --type=plain --noswap --nohome', 'part / --size=4096 --fstype=xfs'));
    const { code, events } = await run(
      inventory(lab, 'errors', {}, {}, {
        [a!]: { instance_info: { ks_template: template } },
        [b!]: { instance_info: { root_device: { serial: 'NO-SUCH-DISK' } } },
      }),
      { anaconda_timeout: 60 },
    );
    expect(code).toBe(2);
    const w = resultsOf(events, WAIT);
    // Failed inside the install block, whose rescue powers the node off: counted rescued.
    expect(w[a!]?.status).toBe('rescued');
    expect(w[a!]?.msg).toMatch(/the installer reported an error after \d+s\. Its last lines:\n[\s\S]*\| .*ERROR anaconda: kickstart line \d+: the simulated installer cannot honour "part"/);
    expect(w[b!]?.msg).toMatch(/No disk for the install: no disk matches root device hints serial/);
    expect(w[b!]?.msg).toMatch(/%pre script \(line \d+\) failed with exit code 22/);
    expect(installed(lab, 1)).toMatchObject({ result: 'failed' });
    // Cleaned up as the other deploys are: off, both media out, still failed.
    for (const [host, i] of [[a!, 0], [b!, 1]] as const) {
      expect(lastFailure(events, host)).toMatch(/node powered off, virtual media ejected \(on_deploy_failure: power_off\) after "Wait for the installer" failed/);
      expect(lab.nodes[i]!.bmc!.state.powerState).toBe('Off');
      expect(anyMediaInserted(lab, i)).toBe(false);
    }
    expect(w[lab.nodes[2]!.cfg.name]?.status).toBe('changed');
  }, 180_000);

  it('a template with problems is refused by the preflight: nothing is powered or inserted', async () => {
    const template = path.join(dir, 'ks-reboot.hbs');
    writeFileSync(template, readFileSync(path.resolve(import.meta.dirname, '../../playbooks/templates/ks.cfg.hbs'), 'utf8').replace(/^poweroff$/m, 'reboot'));
    const power = lab.nodes.map((n) => n.bmc!.state.resets.length);
    const { code, events } = await run(inventory(lab, 'reboot', { ks_template: template }));
    expect(code).toBe(2);
    const p = resultsOf(events, PREFLIGHT);
    for (const r of Object.values(p)) expect(r.msg).toMatch(/kickstart: .*ks-reboot\.hbs: line \d+: reboot would boot the installer again/);
    expect(lab.nodes.map((n) => n.bmc!.state.resets.length)).toEqual(power);
    expect(resultsOf(events, 'Attach the kickstart')).toEqual({});
  }, 120_000);
});

describe('installer faults', () => {
  let faulty: Lab;
  beforeAll(async () => {
    faulty = await startLab({ nodes: 4, dir: path.join(dir, 'faulty'), bootDelayMs: 200, powerDelayMs: 50, faults: 'node01:ks_error;node02:installer_silent;node03:wrong_token' });
  }, 60_000);
  afterAll(async () => {
    await faulty?.close();
  });

  it('ks_error fires %onerror; a silent installer and a wrong token time out, saying what was heard; the healthy node installs', async () => {
    const { code, events, text } = await run(inventory(faulty, 'faults'), { anaconda_timeout: 8 });
    expect(code).toBe(2);
    const w = resultsOf(events, WAIT);
    expect(w.node01?.msg).toMatch(/the installer reported an error after \d+s\. Its last lines:\n[\s\S]*\| .*ERROR anaconda: payload: ostreecontainer failed \(simulated fault ks_error\)/);
    // The installer's lines as it logged them: nothing in them masked that is not a secret.
    expect(w.node01?.msg).toMatch(/INFO anaconda: simulated Anaconda on node01; kickstart from the OEMDRV volume \(ks\.cfg\)\n/);
    expect(w.node01?.msg).not.toContain('********');
    expect(w.node02?.msg).toMatch(/the installer did not call back end within 8s: no callback at all: the installer did not start its kickstart/);
    // It reached tsbm: not "no callback at all", but a kickstart that is not this node's for this run.
    expect(w.node03?.msg).toMatch(/did not call back end within 8s: no callback with this node's token for this run, but 2 callbacks refused \(start with wrong token from 127\.0\.0\.1; error with wrong token from 127\.0\.0\.1\): an installer reached tsbm with a kickstart that is not the one this run gave this node/);
    expect(w.node03?.msg).not.toMatch(/no callback at all/);
    expect(w.node04?.status).toBe('changed');
    for (const i of [0, 1, 2]) {
      expect(faulty.nodes[i]!.bmc!.state.powerState).toBe('Off');
      expect(anyMediaInserted(faulty, i)).toBe(false);
    }
    // The wrong token the installer sent, never printed either.
    const sent = /X-Tsbm-Token: ([A-Za-z0-9_-]+)/.exec(readFileSync(path.join(faulty.nodes[2]!.root, 'tmp', 'ks-script-pre-0.sh'), 'utf8'))?.[1];
    expect(sent).toBeDefined();
    expect(text).not.toContain(sent!.slice(0, -1).split('').reverse().join(''));
  }, 180_000);
});

describe('a BMC with one virtual media slot', () => {
  let single: Lab;
  let mockup: string;
  beforeAll(async () => {
    mockup = path.join(dir, 'one-slot');
    cpSync(path.join(MOCKUPS_DIR, 'hpe-ilo5-dl325-gen10plus'), mockup, { recursive: true });
    rmSync(path.join(mockup, 'Managers/1/VirtualMedia/1'), { recursive: true });
    const coll = path.join(mockup, 'Managers/1/VirtualMedia/index.json');
    const doc = JSON.parse(readFileSync(coll, 'utf8')) as { Members: unknown[]; 'Members@odata.count': number };
    doc.Members = [{ '@odata.id': '/redfish/v1/Managers/1/VirtualMedia/2' }];
    doc['Members@odata.count'] = 1;
    writeFileSync(coll, JSON.stringify(doc));
    single = await startLab({ nodes: 1, dir: path.join(dir, 'single'), bootDelayMs: 200, powerDelayMs: 50, mockups: [mockup] });
  }, 60_000);
  afterAll(async () => {
    await single?.close();
  });

  it('is refused clearly without ks_url; with ks_url and an installer carrying inst.ks= it installs', async () => {
    const refused = await run(inventory(single, 'one-slot'));
    expect(refused.code).toBe(2);
    expect(resultsOf(refused.events, PREFLIGHT).node01?.msg).toMatch(/has one virtual media slot for ISOs .*the kickstart's OEMDRV volume needs a second.*instance_info\.ks_url/);
    expect(single.nodes[0]!.bmc!.state.resets).toEqual([]);

    const port = await new Promise<number>((ok) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => ok(p));
      });
    });
    const ksUrl = `http://127.0.0.1:${port}/ks/node01.cfg`;
    const iso = path.join(dir, 'installer-ks.iso');
    writeFileSync(iso, buildInstallerIso({ ksUrl }));
    const { code, events } = await run(inventory(single, 'ks-url', { ks_url: ksUrl }, { tsbm_http_address: '127.0.0.1', tsbm_http_port: port, installer_iso: iso }));
    expect(code, JSON.stringify(resultsOf(events, WAIT))).toBe(0);
    expect(installed(single, 0)).toMatchObject({ result: 'installed', from: `inst.ks=${ksUrl}` });
    expect(resultsOf(events, 'Attach the kickstart').node01?.msg).toMatch(/served at http:\/\/127\.0\.0\.1:\d+\/ks\/node01\.cfg until the installer starts/);
    expect(existsSync(path.join(single.nodes[0]!.root, 'sim', 'installed.json'))).toBe(true);
  }, 180_000);

  it('with the installer as files and ks_url, tsbm puts inst.ks= on the boot ISO it builds: no installer ISO of your own needed', async () => {
    const port = await new Promise<number>((ok) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => ok(p));
      });
    });
    const origin = new URL(String((parse(readFileSync(single.inventory, 'utf8')) as Doc).all.vars.installer_iso)).origin;
    const ksUrl = `http://127.0.0.1:${port}/ks/node01.cfg`;
    const info = {
      ks_url: ksUrl,
      kernel: `${origin}${SIM_INSTALLER_FILES.kernel}`,
      ramdisk: `${origin}${SIM_INSTALLER_FILES.ramdisk}`,
      stage2: `${origin}${SIM_INSTALLER_FILES.stage2}`,
    };
    const vars = { tsbm_http_address: '127.0.0.1', tsbm_http_port: port, installer_iso: '', driver_info: { bootloader: `${origin}${SIM_INSTALLER_FILES.bootloader}` } };
    const { code, events } = await run(inventory(single, 'files-ks-url', info, vars));
    expect(code, JSON.stringify(resultsOf(events, WAIT))).toBe(0);
    expect(installed(single, 0)).toMatchObject({ result: 'installed', from: `inst.ks=${ksUrl}`, boot: { via: 'el-torito', args: [`inst.stage2=${info.stage2}`, `inst.ks=${ksUrl}`] } });
  }, 180_000);
});

describe("a machine without curl: the installer calls back with tsbm's curl stand-in", () => {
  let bare: Lab;
  const saved = process.env.TSBM_SIM_STANDINS;
  beforeAll(async () => {
    // As on a minimal Debian: the lab puts the stand-in on the nodes' PATH, and it does not
    // hand over to the machine's curl.
    process.env.TSBM_SIM_STANDINS = 'curl';
    bare = await startLab({ nodes: 2, dir: path.join(dir, 'bare'), bootDelayMs: 200, powerDelayMs: 50 });
  }, 60_000);
  afterAll(async () => {
    if (saved === undefined) delete process.env.TSBM_SIM_STANDINS;
    else process.env.TSBM_SIM_STANDINS = saved;
    await bare?.close();
  });

  it('installs, every callback made by the stand-in', async () => {
    const { code, events } = await run(inventory(bare, 'standin'));
    expect(code, JSON.stringify(resultsOf(events, WAIT))).toBe(0);
    for (let i = 0; i < 2; i++) {
      expect(installed(bare, i)).toMatchObject({ result: 'installed', authFileMode: '0600', pullSecretLeft: false });
      const args = readFileSync(path.join(bare.nodes[i]!.root, 'sim', 'curl-standin-args'), 'utf8');
      for (const what of ['start', 'disk', 'pull-secret', 'end']) expect(args).toMatch(new RegExp(`/install/[0-9a-f]{24}/${what}$`, 'm'));
    }
  }, 180_000);
});
