// One simulated node: a fake Redfish BMC serving a vendor tree, a sparse disk file, and a
// ramdisk SSH server that exists only while the node is powered on after booting from
// inserted virtual media with boot override Cd. After a deploy it boots to disk and runs an
// "instance" SSH server instead. Commands run as real processes in the node's sandbox.
import { randomUUID } from 'node:crypto';
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, ftruncateSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { FakeBmc } from '../bmc/server.js';
import type { BootInfo } from '../bmc/state.js';
import type { BmcGroup } from './bmc-group.js';
import { type SshServerHandle, shellExecHandler, startSshServer } from '../ssh/server.js';
import type { SshExecHandler } from '../ssh/server.js';
import type { SpawnerPool } from '../ssh/spawner-pool.js';
import { sandboxCommand } from './command-rewrite.js';
import type { NodeFaults } from './faults.js';
import { readDiskLayout, type DiskLayout } from './disk-layout.js';
import { extractInstanceFiles } from './instance-files.js';
import { type InstallerFault, runInstaller } from '../installer/install.js';
import { fetchKickstart, readInstaller, readOemdrvKickstart } from '../installer/media.js';
import type { SimImage } from './images.js';
import { nodeMacs, personalizeSystem } from './identity.js';

export interface SimNodeConfig {
  name: string;
  index: number;
  dir: string; // the node's own directory
  /** The BMC this node is a System of (its own, or one a multi-System tree's nodes share). */
  bmcGroup: BmcGroup;
  /** The group's BMC port, known once the group has started; start() copies it here. */
  bmcPort: number;
  /** 0 until start() when the OS is to pick; start() records the port it listens on. */
  sshPort: number;
  instancePort: number;
  diskBytes: number;
  memoryMiB: number;
  hostKey: string; // private, OpenSSH
  hostKeyPub: string;
  instanceHostKey: string;
  instanceHostKeyPub: string;
  authorizedKey: string; // the controller's public key
  /** Simulated tools, first on the ramdisk's PATH. */
  toolDirs: string[];
  bmcUser: string;
  bmcPassword: string;
  bootDelayMs: number;
  faults: NodeFaults;
  /** Registry credentials the simulated registry accepts (user:password). */
  registryAuth: string;
  registryHost: string;
  imagesDir: string;
  /** Lab-wide scratch every node's tools can write: sim-bootc's GPT templates. */
  cacheDir: string;
  /** The lab's spawner processes; without them commands are forked from the lab itself. */
  spawner?: SpawnerPool;
  /** The lab's own ramdisk ISO: booting it needs no look at the media. */
  ramdiskIsoUrl?: string;
  /** The lab registry's catalogue, which the simulated installer's ostreecontainer pulls from. */
  images?: readonly SimImage[];
}

export type SimPhase = 'off' | 'booting' | 'ramdisk' | 'installer' | 'instance' | 'firmware';

export class SimNode {
  readonly uuid = randomUUID().toUpperCase();
  readonly macs: string[];
  readonly root: string;
  /** Which of its BMC's Systems this node is. */
  readonly systemPath: string;
  phase: SimPhase = 'off';
  bmc: FakeBmc | undefined;
  private ssh: SshServerHandle | undefined;
  /** The node's "network ports": held for the lab's life so nothing else can take them while the node is off. */
  private readonly nics: Server[] = [];
  private bootTimer: NodeJS.Timeout | undefined;
  /** A boot whose timer fired and whose SSH server is still starting: power off and stop wait for it. */
  private booting: Promise<void> | undefined;
  private stopped = false;
  private lastBoot: BootInfo | undefined;
  /** A simulated installer at work, and how to stop it (power off, lab stop). */
  private install: { abort: AbortController; done: Promise<void> } | undefined;
  /** SSH exec requests (round trips) of the SSH servers this node ran and stopped. */
  private execsBefore = 0;

  constructor(readonly cfg: SimNodeConfig) {
    const n = cfg.index;
    this.macs = nodeMacs(n);
    this.root = join(cfg.dir, 'root');
    this.systemPath = cfg.bmcGroup.attach({
      onPower: (s) => {
        if (s === 'Off') void this.powerOff();
      },
      onBoot: (info) => this.boot(info),
    });
  }

  get diskFile(): string {
    return join(this.root, 'dev', 'vda');
  }

  /** Listens on a port (0: one the OS picks) for the node's whole life; connections reach whatever server runs now. */
  private async nic(port: number): Promise<number> {
    let listening = port;
    const server = createServer((sock) => {
      sock.on('error', () => {});
      const handle = this.ssh;
      if (handle && this.servingPort === listening) handle.accept(sock);
      else sock.destroy(); // powered off, or booted into something that does not listen here
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.nics.push(server);
    const a = server.address();
    if (typeof a === 'object' && a) listening = a.port;
    return listening;
  }

  private servingPort = 0;

  async start(): Promise<void> {
    const c = this.cfg;
    c.sshPort = await this.nic(c.sshPort);
    c.instancePort = await this.nic(c.instancePort);
    // sim-images is the simulated podman's store: made here, its first pull forks no mkdir.
    for (const d of ['dev', 'run', 'tmp', 'etc/containers', 'var/lib/containers/sim-images', 'sys/class/dmi/id', 'proc', 'sim']) {
      mkdirSync(join(this.root, d), { recursive: true });
    }
    // A sparse file the size of the node's disk: nothing is allocated until written. Whole
    // 512-byte sectors (sized in GiB): sim-bootc's GPT template copy relies on it.
    const fd = openSync(this.diskFile, 'a');
    ftruncateSync(fd, c.diskBytes);
    closeSync(fd);
    const uuid = c.faults.wrongUuid ? randomUUID().toUpperCase() : this.uuid;
    writeFileSync(join(this.root, 'sys/class/dmi/id/product_uuid'), `${uuid.toLowerCase()}\n`);
    writeFileSync(
      join(this.root, 'proc/meminfo'),
      `MemTotal:       ${c.memoryMiB * 1024} kB\nMemFree:        ${c.memoryMiB * 1000} kB\nMemAvailable:   ${c.memoryMiB * 1000} kB\n`,
    );
    writeFileSync(
      join(this.root, 'sim/node.env'),
      [
        `TSBM_SIM_NODE=${c.name}`,
        `TSBM_SIM_MACS="${this.macs.join(' ')}"`,
        `TSBM_SIM_REGISTRY=${c.registryHost}`,
        `TSBM_SIM_REGISTRY_AUTH=${Buffer.from(c.registryAuth).toString('base64')}`,
        `TSBM_SIM_IMAGES=${c.imagesDir}`,
        `TSBM_SIM_CACHE=${c.cacheDir}`,
        `TSBM_SIM_DISK_BYTES=${c.diskBytes}`,
        `TSBM_SIM_PULL_FAIL=${c.faults.pullFail ? 1 : 0}`,
        `TSBM_SIM_BOOTC_FAIL=${c.faults.bootcFail ? 1 : 0}`,
        '',
      ].join('\n'),
    );
    // Where the node's own BMC started before it had one shared: the same order of files and
    // sockets opened (a lab running out of descriptors fails at the same step).
    this.bmc = await c.bmcGroup.start();
    c.bmcPort = this.bmc.port;
    this.personalize();
  }

  /** The node's identity as its BMC reports it: its own UUID and MACs, powered off. */
  private personalize(): void {
    personalizeSystem(this.bmc!.state, this.systemPath, this.uuid, this.macs);
  }

  private boot(info: BootInfo): void {
    this.lastBoot = info;
    clearTimeout(this.bootTimer);
    const fromCd = (info.bootSourceOverrideTarget === 'Cd' || info.bootSourceOverrideTarget === 'UsbCd') && info.mediaInserted;
    const fromDisk = !fromCd && (info.bootSourceOverrideTarget === 'Hdd' || info.bootSourceOverrideTarget === undefined || info.bootSourceOverrideTarget === 'None');
    this.phase = 'booting';
    this.bootTimer = setTimeout(() => {
      const boot = fromCd ? (this.cfg.faults.neverBoots ? undefined : this.startFromCd(info)) : fromDisk ? this.startInstance() : undefined;
      if (!boot) this.phase = 'firmware'; // PXE, BIOS setup, a CD boot without media, or a faulty node: nothing answers
      // One node failing to come up must not take the whole lab down with it.
      this.booting = boot?.catch((e: unknown) => {
        this.phase = 'firmware';
        if (!this.stopped) process.stderr.write(`${this.cfg.name}: boot failed: ${(e as Error).message}\n`);
      });
    }, this.cfg.bootDelayMs);
  }

  get sysimage(): string {
    return join(this.cfg.dir, 'sysimage');
  }

  /**
   * A CD boot: the lab's ramdisk ISO boots the ramdisk at once. Any other ISO is looked at as a
   * BMC presents it: an installer (a .treeinfo naming a stage2 image) runs the simulated
   * installer with the kickstart it finds (an OEMDRV volume in another slot, else inst.ks= in its
   * boot configuration); anything else boots the ramdisk, as before.
   */
  private async startFromCd(info: BootInfo): Promise<void> {
    await this.stopSsh();
    // What an earlier deploy left is not this boot's.
    rmSync(this.sysimage, { recursive: true, force: true });
    rmSync(join(this.root, 'sim', 'installed.json'), { force: true });
    if (!info.image || info.image === this.cfg.ramdiskIsoUrl) return this.startRamdisk();
    const installer = await readInstaller(info.image);
    if (!installer) return this.startRamdisk();
    if (installer.elTorito && !installer.elTorito.stage2Answers) {
      // dracut cannot fetch inst.stage2=: it drops to its emergency shell; nothing calls back.
      this.phase = 'installer';
      mkdirSync(join(this.root, 'sim'), { recursive: true });
      writeFileSync(join(this.root, 'sim', 'installed.json'), `${JSON.stringify({ result: 'stage2 unreachable', from: info.image, stage2: installer.elTorito.stage2 })}\n`);
      return;
    }
    const oemdrv = await readOemdrvKickstart(info.otherMedia.map((m) => m.image));
    let ks = oemdrv ? { text: oemdrv.text, from: `OEMDRV volume ${oemdrv.url}` } : undefined;
    if (!ks && installer.ksUrl) {
      const text = await fetchKickstart(installer.ksUrl);
      if (text !== undefined) ks = { text, from: `inst.ks=${installer.ksUrl}` };
    }
    this.phase = 'installer';
    if (!ks) {
      // No kickstart: Anaconda would wait at its interactive screens; nothing calls back.
      mkdirSync(join(this.root, 'sim'), { recursive: true });
      writeFileSync(join(this.root, 'sim', 'installed.json'), `${JSON.stringify({ result: 'no kickstart', from: info.image, ksUrl: installer.ksUrl ?? null })}
`);
      return;
    }
    this.startInstaller(ks.text, ks.from, installer.elTorito ? { via: 'el-torito', stage2: installer.elTorito.stage2, args: installer.elTorito.args } : undefined);
  }

  private startInstaller(kickstart: string, from: string, boot?: { via: 'el-torito'; stage2: string; args: string[] }): void {
    const c = this.cfg;
    const abort = new AbortController();
    const faults = new Set<InstallerFault>();
    if (c.faults.ksError) faults.add('ks_error');
    if (c.faults.installerSilent) faults.add('installer_silent');
    if (c.faults.wrongToken) faults.add('wrong_token');
    const state = this.bmc!.state;
    const done = runInstaller(
      kickstart,
      {
        node: c.name,
        installerRoot: this.root,
        sysimage: this.sysimage,
        diskFile: this.diskFile,
        // The ramdisk's tools: lsblk for %pre, curl's stand-in where the machine has no curl.
        toolDirs: c.toolDirs,
        env: {
          ...baseEnv(),
          TSBM_SIM_ROOT: this.root,
          TSBM_SIM_ENV: join(this.root, 'sim/node.env'),
        },
        ...(c.spawner ? { spawner: c.spawner } : {}),
        registryHost: c.registryHost,
        registryAuth: c.registryAuth,
        images: c.images ?? [],
        faults,
        from,
        ...(boot ? { boot } : {}),
        // The installed system powers off (or restarts) through its BMC, as a real one does.
        powerOff: () => state.transition('Off', undefined, this.systemPath),
        reboot: () => state.transition('Off', 'On', this.systemPath),
      },
      abort.signal,
    ).then(
      () => undefined,
      (e: unknown) => {
        if (!abort.signal.aborted && !this.stopped) process.stderr.write(`${c.name}: simulated installer failed: ${(e as Error).message}\n`);
      },
    );
    this.install = { abort, done };
  }

  /** Stops a simulated installer (its scripts are killed) and waits for it to let go. */
  private async stopInstaller(): Promise<void> {
    const i = this.install;
    this.install = undefined;
    if (!i) return;
    i.abort.abort(new Error('powered off'));
    await i.done;
  }

  private async startRamdisk(): Promise<void> {
    await this.stopSsh();
    const c = this.cfg;
    const shell = shellExecHandler({
      cwd: this.root,
      pathPrefix: c.toolDirs,
      env: { ...baseEnv(), TSBM_SIM_ROOT: this.root, TSBM_SIM_ENV: join(this.root, 'sim/node.env') },
      ...(c.spawner ? { spawner: c.spawner } : {}),
    });
    const exec: SshExecHandler = (command, session) => shell(sandboxCommand(command, this.root), session);
    this.ssh = await startSshServer({
      listen: false,
      hostKeys: [c.hostKey],
      authorizedKeys: [c.authorizedKey],
      exec,
      sftpRoot: this.root,
      ...(c.faults.sshDrop ? { dropAfter: c.faults.sshDrop } : {}),
    });
    this.servingPort = c.sshPort;
    this.phase = 'ramdisk';
  }

  private async startInstance(): Promise<void> {
    await this.stopSsh();
    const layout = await this.diskLayout();
    if (layout.partitions.length === 0) {
      this.phase = 'firmware'; // no operating system on the disk: the node sits in firmware
      return;
    }
    const instRoot = join(this.cfg.dir, 'instance');
    await extractInstanceFiles(this.diskFile, layout, instRoot);
    // What a simulated installer put into the installed system (its %post, root's keys).
    if (existsSync(this.sysimage)) cpSync(this.sysimage, instRoot, { recursive: true });
    const shell = shellExecHandler({ cwd: instRoot, env: baseEnv(), ...(this.cfg.spawner ? { spawner: this.cfg.spawner } : {}) });
    const exec: SshExecHandler = (command, session) => shell(sandboxCommand(command, instRoot), session);
    this.ssh = await startSshServer({
      listen: false,
      hostKeys: [this.cfg.instanceHostKey],
      authorizedKeys: [this.cfg.authorizedKey],
      exec,
      sftpRoot: instRoot,
    });
    this.servingPort = this.cfg.instancePort;
    this.phase = 'instance';
  }

  private async powerOff(): Promise<void> {
    clearTimeout(this.bootTimer);
    await this.settleBoot(); // a boot under way sets its phase on finishing: off comes after it
    this.phase = 'off';
    await this.stopSsh();
    await this.stopInstaller();
  }

  /** Lets a boot already under way finish, so the SSH server it starts is stopped after it. */
  private async settleBoot(): Promise<void> {
    const boot = this.booting;
    this.booting = undefined;
    await boot;
  }

  private async stopSsh(): Promise<void> {
    const s = this.ssh;
    this.ssh = undefined;
    this.servingPort = 0;
    if (s) {
      this.execsBefore += s.execs;
      s.dropConnections();
      await s.close();
    }
  }

  diskLayout(): Promise<DiskLayout> {
    return readDiskLayout(this.diskFile);
  }

  /** What the simulated installer recorded on this node (installed.json), if it ran. */
  installRecord(): Record<string, unknown> | undefined {
    const f = join(this.root, 'sim', 'installed.json');
    if (!existsSync(f)) return undefined;
    try {
      return JSON.parse(readFileSync(f, 'utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }

  async status(): Promise<Record<string, unknown>> {
    const state = this.bmc?.state;
    const slot = state?.cdSlots(this.systemPath).find((s) => s.Inserted === true);
    const boot = state?.bootOf(this.systemPath) ?? {};
    const layout = await this.diskLayout();
    return {
      name: this.cfg.name,
      ...(this.cfg.bmcGroup.shared ? { system: this.systemPath } : {}),
      power: state?.powerStateOf(this.systemPath) ?? 'Off',
      phase: this.phase,
      bootOverride: `${boot.BootSourceOverrideTarget ?? 'None'}/${boot.BootSourceOverrideEnabled ?? 'Disabled'}`,
      media: typeof slot?.Image === 'string' ? slot.Image : '',
      disk: layout.summary,
      lastBoot: this.lastBoot?.bootSourceOverrideTarget ?? null,
      installer: installerSummary(this.installRecord()),
      // What tsbm cost this node: every request its BMC answered, every SSH exec (a round trip;
      // batched commands ride in one) its ramdisk and instance servers ran.
      bmcRequests: this.bmc?.requestCount() ?? 0,
      sshExecs: this.execsBefore + (this.ssh?.execs ?? 0),
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.bootTimer);
    await this.settleBoot();
    await this.stopSsh();
    await this.stopInstaller();
    for (const n of this.nics.splice(0)) await new Promise((r) => n.close(r));
    // The BMC is the group's: the lab closes it after its nodes.
  }
}

function installerSummary(r: Record<string, unknown> | undefined): string | null {
  if (!r) return null;
  const src = r.source as { kind?: string; url?: string } | undefined;
  return `${String(r.result)}${src?.kind ? `: ${src.kind} ${src.url ?? ''}` : ''}${r.error ? ` (${String(r.error).split('\n')[0]})` : ''}`;
}

function baseEnv(): Record<string, string> {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    LANG: 'C',
    HOME: '/root',
    // What sshd sets from the login user's passwd entry: tsbm then runs its PID prelude in this
    // shell instead of starting another sh per command, exactly as against a real ramdisk.
    SHELL: '/bin/sh',
    // The partitioning tools' stand-ins (packages/lab/src/gpt) run on this node binary; tests can force
    // them over the machine's own tools.
    TSBM_SIM_NODE_BIN: process.execPath,
    ...(process.env.TSBM_SIM_STANDINS ? { TSBM_SIM_STANDINS: process.env.TSBM_SIM_STANDINS } : {}),
  };
}
