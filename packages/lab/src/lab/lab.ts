// The simulated lab: N nodes in one process, each a fake BMC plus a ramdisk that appears when
// the node boots from virtual media, and an inventory that points tsbm at them.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { makeLabDir, writePrivateFile } from './private-dir.js';
import { join, resolve } from 'node:path';
import { generateSshKeyPair } from '../ssh/keys.js';
import { stringify } from 'yaml';
import { TsbmError } from 'tsbm/lib/errors.js';
import { faultsFor, type NodeFaults, parseFaultSpec } from './faults.js';
import { checkHostPrograms } from './host-programs.js';
import { SIM_IMAGES, SIM_REGISTRY, writeImageCatalogue } from './images.js';
import { BmcGroup, systemsOf } from './bmc-group.js';
import { SimNode, type SimNodeConfig } from './node.js';
import { SIM_INSTALLER_ISO_PATH, SIM_ISO_PATH, type SimRegistry, startSimRegistry } from './registry-server.js';
import { SpawnerPool } from '../ssh/spawner-pool.js';
import { DEFAULT_MOCKUPS, ramdiskToolDirs, resolveMockup } from './package-paths.js';
import { nodeDirFor } from './shell-safe-dir.js';
import { VmNode } from '../vm/vm-node.js';
import { checkQemu } from '../vm/qemu-check.js';

export interface LabOptions {
  nodes: number;
  dir: string;
  mockups?: string[];
  faults?: string;
  /** How long a node takes from power-on to an answering ramdisk (default 1500 ms). */
  bootDelayMs?: number;
  /** PoweringOn/PoweringOff duration (default 300 ms). */
  powerDelayMs?: number;
  diskGiB?: number;
  memoryMiB?: number;
  /** `sim` (default): simulated nodes; `qemu`: QEMU virtual machines with UEFI firmware (vm/). */
  machines?: 'sim' | 'qemu';
}

export interface Lab {
  dir: string;
  inventory: string;
  /** The simulated nodes (none when the lab's machines are VMs). */
  nodes: SimNode[];
  /** The virtual machines (`machines: 'qemu'`). */
  vms: VmNode[];
  /** The registry and ISO server the controller's preflight reaches (registry_endpoints). */
  registry: SimRegistry;
  status(): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

const MAX_NODES = 5000;
const BMC_USER = 'admin';

/** node01 .. nodeNN (as wide as the largest number, at least two digits). */
function simNodeName(i: number, total: number): string {
  return `node${String(i).padStart(Math.max(2, String(total).length), '0')}`;
}

function keyPair(): { priv: string; pub: string } {
  const k = generateSshKeyPair('ed25519');
  return { priv: k.private, pub: k.public };
}

/** The controller's key for this lab: made once, reused by later `sim up`s in the same dir. */
function controllerKey(dir: string): { file: string; pub: string } {
  const file = join(dir, 'controller_ed25519');
  if (!existsSync(file)) {
    const k = keyPair();
    writeFileSync(file, k.priv, { mode: 0o600 });
    writeFileSync(`${file}.pub`, `${k.pub}\n`);
  }
  return { file, pub: readFileSync(`${file}.pub`, 'utf8').trim() };
}

function checkNodeCount(nodes: number): void {
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_NODES) {
    throw new TsbmError('options', `--nodes must be a whole number from 1 to ${MAX_NODES}, got ${nodes}`);
  }
}

export async function startLab(opts: LabOptions): Promise<Lab> {
  checkNodeCount(opts.nodes);
  const qemu = opts.machines === 'qemu' ? checkQemu(opts.nodes) : undefined;
  const mockups = (opts.mockups?.length ? opts.mockups : [DEFAULT_MOCKUPS[0]!]).map((m) => {
    const dir = resolveMockup(m);
    if (!dir) throw new TsbmError('options', `--mockup ${m}: not a shipped tree nor a directory with index.json`, { hint: `shipped trees: ${DEFAULT_MOCKUPS.join(', ')}` });
    return dir;
  });
  const faultSpec = parseFaultSpec(opts.faults);
  if (!qemu) checkHostPrograms();
  const dir = resolve(opts.dir);
  makeLabDir(dir);
  mkdirSync(join(dir, 'nodes'), { recursive: true });
  // What the nodes' shell tools see of the lab: the directory, or a plain-named link to it.
  const nodeDir = nodeDirFor(dir);
  const imagesDir = join(nodeDir.path, 'images');
  writeImageCatalogue(imagesDir);
  // Lab-wide cache the nodes' tools share (sim-bootc's GPT templates, one per disk size and root
  // size). Emptied at every start: a template outlives no lab, nor the tools that made it.
  const cacheDir = join(nodeDir.path, 'cache');
  rmSync(cacheDir, { recursive: true, force: true });
  mkdirSync(cacheDir);
  const controller = controllerKey(dir);
  const registryAuth = `tsbm:${randomBytes(9).toString('base64url')}`;
  const bmcPassword = randomBytes(12).toString('base64url');

  // A tree whose BMC manages several Systems puts that many nodes behind one BMC.
  const systems = new Map<string, string[]>();
  for (const m of new Set(mockups)) systems.set(m, await systemsOf(m));
  const groups: BmcGroup[] = [];
  const filling = new Map<string, BmcGroup>();
  const groupFor = (mockupDir: string, faults: NodeFaults, seed: number): BmcGroup => {
    let g = filling.get(mockupDir);
    if (!g || g.full) {
      g = new BmcGroup({ mockupDir, username: 'admin', password: bmcPassword, powerDelayMs: opts.powerDelayMs ?? 300, faults, seed }, systems.get(mockupDir)!);
      filling.set(mockupDir, g);
      groups.push(g);
    }
    return g;
  };

  const spawner = qemu ? undefined : await SpawnerPool.start();
  const registry = await startSimRegistry({ registryHost: SIM_REGISTRY, images: SIM_IMAGES, auth: registryAuth });
  const nodes: SimNode[] = [];
  const vms: VmNode[] = [];
  for (let i = 1; i <= opts.nodes; i++) {
    const name = simNodeName(i, opts.nodes);
    if (qemu) {
      vms.push(
        new VmNode({
          name,
          index: i,
          dir: join(nodeDir.path, 'nodes', name),
          bmcGroup: groupFor(mockups[(i - 1) % mockups.length]!, faultsFor(faultSpec, name, i), i),
          bmcPort: 0,
          sshPort: 0,
          instancePort: 0,
          bmcUser: BMC_USER,
          diskBytes: (opts.diskGiB ?? 8) * 1024 ** 3,
          memoryMiB: opts.memoryMiB ?? 768,
          cpus: 1,
          firmware: qemu.firmware,
          accel: qemu.accel,
        }),
      );
      continue;
    }
    const host = keyPair();
    const inst = keyPair();
    const faults = faultsFor(faultSpec, name, i);
    nodes.push(
      new SimNode({
        name,
        index: i,
        dir: join(nodeDir.path, 'nodes', name),
        bmcGroup: groupFor(mockups[(i - 1) % mockups.length]!, faults, i),
        // The OS picks each port as the node listens: ports probed free beforehand could be
        // taken by anyone (a test, an outgoing connection) before a large lab got to them.
        bmcPort: 0,
        sshPort: 0,
        instancePort: 0,
        diskBytes: (opts.diskGiB ?? 20) * 1024 ** 3,
        memoryMiB: opts.memoryMiB ?? 16384,
        hostKey: host.priv,
        hostKeyPub: host.pub,
        instanceHostKey: inst.priv,
        instanceHostKeyPub: inst.pub,
        authorizedKey: controller.pub,
        toolDirs: ramdiskToolDirs(),
        bmcUser: BMC_USER,
        bmcPassword,
        bootDelayMs: opts.bootDelayMs ?? 1500,
        faults,
        registryAuth,
        registryHost: SIM_REGISTRY,
        imagesDir,
        cacheDir,
        ...(spawner ? { spawner } : {}),
        ramdiskIsoUrl: `${registry.url}${SIM_ISO_PATH}`,
        images: SIM_IMAGES,
      }),
    );
  }
  const stopAll = async () => {
    await Promise.all([...nodes, ...vms].map((n) => n.stop().catch(() => undefined)));
    await Promise.all(groups.map((g) => g.close().catch(() => undefined)));
    await spawner?.close();
    await registry.close();
    nodeDir.release();
  };
  try {
    // Start in slices so a 1000-node lab doesn't open every file and socket at once.
    const all = [...nodes, ...vms];
    for (let i = 0; i < all.length; i += 50) await Promise.all(all.slice(i, i + 50).map((n) => n.start()));
  } catch (e) {
    await stopAll();
    throw e;
  }

  const caFile = join(dir, 'bmc-ca.pem');
  writeFileSync(caFile, (nodes[0] ?? vms[0])!.bmc!.caCertPem);
  const knownHosts = join(dir, 'known_hosts');
  // A VM's ramdisk and instance make their own host keys: the operator's known_hosts policy decides.
  writeFileSync(
    knownHosts,
    nodes
      .flatMap((n) => [
        `[127.0.0.1]:${n.cfg.sshPort} ${n.cfg.hostKeyPub}`,
        `[127.0.0.1]:${n.cfg.instancePort} ${n.cfg.instanceHostKeyPub}`,
      ])
      .join('\n') + '\n',
  );
  const inventory = join(dir, 'inventory.yml');
  writePrivateFile(
    inventory,
    renderInventory({
      nodes: [...nodes, ...vms],
      controllerKey: controller.file,
      controllerPub: controller.pub,
      knownHosts,
      caFile,
      registryAuth,
      bmcPassword,
      registryUrl: registry.url,
    }),
  );

  return {
    dir,
    inventory,
    nodes,
    vms,
    registry,
    status: () => Promise.all([...nodes, ...vms].map((n) => n.status())),
    close: stopAll,
  };
}

/** The inventory `startLab` would write, without a lab: ports 0, a placeholder key (for `tsbm validate`). */
export function previewInventory(dir: string, nodes: number): string {
  checkNodeCount(nodes);
  return renderInventory({
    // one System per BMC, as the default tree has (a multi-System tree adds redfish_system_id)
    nodes: Array.from({ length: nodes }, (_, i) => ({
      cfg: {
        name: simNodeName(i + 1, nodes),
        sshPort: 0,
        instancePort: 0,
        bmcPort: 0,
        bmcUser: BMC_USER,
        bmcGroup: { shared: false },
      },
      systemPath: '/redfish/v1/Systems/1',
    })),
    controllerKey: join(dir, 'controller_ed25519'),
    controllerPub: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPreviewOnlyNotAKey tsbm-sim-preview',
    knownHosts: join(dir, 'known_hosts'),
    caFile: join(dir, 'bmc-ca.pem'),
    registryAuth: 'tsbm:preview',
    bmcPassword: 'preview',
    registryUrl: 'http://127.0.0.1:0',
  });
}

function renderInventory(p: {
  nodes: ReadonlyArray<{
    cfg: Pick<SimNodeConfig, 'name' | 'sshPort' | 'instancePort' | 'bmcPort' | 'bmcUser'> & {
      bmcGroup: { shared: boolean };
    };
    systemPath: string;
    /** A VM's serial console file (wait_agent shows its last lines when the ramdisk never answers). */
    consoleFile?: string;
  }>;
  controllerKey: string;
  controllerPub: string;
  knownHosts: string;
  caFile: string;
  registryAuth: string;
  bmcPassword: string;
  registryUrl: string;
}): string {
  const hosts: Record<string, unknown> = {};
  for (const n of p.nodes) {
    hosts[n.cfg.name] = {
      ssh_host: '127.0.0.1',
      ssh_port: n.cfg.sshPort,
      instance_ssh_port: n.cfg.instancePort,
      ...(n.consoleFile ? { console_log: n.consoleFile } : {}),
      driver_info: {
        redfish_address: `https://127.0.0.1:${n.cfg.bmcPort}`,
        // Behind a BMC that manages several Systems, the node is one of them.
        ...(n.cfg.bmcGroup.shared ? { redfish_system_id: n.systemPath } : {}),
        redfish_username: n.cfg.bmcUser,
        redfish_password: p.bmcPassword,
        redfish_verify_ca: p.caFile,
      },
    };
  }
  const doc = {
    all: {
      vars: {
        ssh_user: 'root',
        ssh_private_key_file: p.controllerKey,
        ssh_known_hosts_file: p.knownHosts,
        ramdisk_iso: `${p.registryUrl}${SIM_ISO_PATH}`,
        // deploy-anaconda.yml boots this; the lab's nodes run a simulated installer from it.
        installer_iso: `${p.registryUrl}${SIM_INSTALLER_ISO_PATH}`,
        // Where the controller's preflight finds the registry the images name.
        registry_endpoints: { [SIM_REGISTRY]: p.registryUrl },
        instance_info: {
          image_source: `oci://${SIM_IMAGES[0]!.ref}`,
          image_pull_secret: Buffer.from(p.registryAuth).toString('base64'),
          root_device: { name: '/dev/vda' },
          bootc_authorized_keys: p.controllerPub,
          configdrive: {
            meta_data: { public_keys: { controller: p.controllerPub } },
            user_data: '#cloud-config\nhostname: {{ inventory_hostname }}\n',
          },
        },
      },
      children: { sim: { hosts } },
    },
  };
  return `# Written by \`tsbm sim up\`: ${p.nodes.length} simulated node(s). Regenerated on every start.\n${stringify(doc)}`;
}
