// A lab node that is a QEMU virtual machine with UEFI firmware behind the lab's fake BMC: power
// on starts the VM (booting what the boot override names first), power off stops it, a restart
// does both; the BMC's virtual CD is the VM's CD drive; its disk is a file; its serial console
// is appended to a file. SSH reaches the guest's port 22 through a port on 127.0.0.1 that the
// node holds for the lab's life (the VM's own forward changes with every power-on).
import { randomUUID } from 'node:crypto';
import { appendFileSync, closeSync, copyFileSync, existsSync, ftruncateSync, mkdirSync, openSync } from 'node:fs';
import { consoleTail } from 'tsbm/lib/util/console-tail.js';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { BootInfo } from '../bmc/state.js';
import type { FakeBmc } from '../bmc/server.js';
import type { BmcGroup } from '../lab/bmc-group.js';
import { nodeMacs, personalizeSystem } from '../lab/identity.js';
import type { BootFirst } from './qemu-argv.js';
import { QemuMachine, type VmExit } from './qemu-machine.js';
import { localMedium } from './vm-media.js';

export interface VmNodeConfig {
  name: string;
  index: number;
  dir: string;
  bmcGroup: BmcGroup;
  /** Known once the group's BMC has started. */
  bmcPort: number;
  /** 0: the OS picks; start() records the port. Ramdisk and instance both answer on the guest's 22. */
  sshPort: number;
  instancePort: number;
  bmcUser: string;
  diskBytes: number;
  memoryMiB: number;
  cpus: number;
  firmware: { code: string; vars: string };
  accel: 'kvm' | 'tcg';
}

export type VmPhase = 'off' | 'starting' | 'running' | 'failed';

export class VmNode {
  readonly uuid = randomUUID().toUpperCase();
  readonly macs: string[];
  readonly systemPath: string;
  readonly vm: QemuMachine;
  bmc: FakeBmc | undefined;
  phase: VmPhase = 'off';
  private lastError: string | undefined;
  private lastBoot: BootFirst | undefined;
  /** Power and media events, one at a time in the order the BMC made them. */
  private work: Promise<void> = Promise.resolve();
  private readonly nics: Server[] = [];
  private stopped = false;

  constructor(readonly cfg: VmNodeConfig) {
    this.macs = nodeMacs(cfg.index);
    mkdirSync(cfg.dir, { recursive: true });
    this.vm = new QemuMachine(
      {
        name: cfg.name,
        uuid: this.uuid,
        macs: this.macs,
        memoryMiB: cfg.memoryMiB,
        cpus: cfg.cpus,
        diskFile: this.diskFile,
        firmwareCode: cfg.firmware.code,
        firmwareVars: join(cfg.dir, 'OVMF_VARS.fd'),
        qmpSocket: join(cfg.dir, 'qmp.sock'),
        consoleFile: this.consoleFile,
        accel: cfg.accel,
      },
      (why, detail) => this.exited(why, detail),
    );
    this.systemPath = cfg.bmcGroup.attach({
      onPower: (s) => {
        if (s === 'Off') this.queue(() => this.powerOff());
      },
      onBoot: (info) => this.queue(() => this.powerOn(info)),
      onMedia: () => this.queue(() => this.mediaChanged()),
    });
  }

  get diskFile(): string {
    return join(this.cfg.dir, 'disk.img');
  }

  get consoleFile(): string {
    return join(this.cfg.dir, 'console.log');
  }

  /** Waits for the power and media changes asked so far (tests check the VM after them). */
  settled(): Promise<void> {
    return this.work;
  }

  private queue(step: () => Promise<void>): void {
    this.work = this.work.then(step).catch((e: unknown) => {
      this.phase = 'failed';
      this.lastError = (e as Error).message;
      this.note(`error: ${this.lastError}`);
    });
  }

  /** A line of the lab's own in the console file, so a reader sees where each power-on began. */
  private note(text: string): void {
    appendFileSync(this.consoleFile, `\n[tsbm lab] ${new Date().toISOString()} ${this.cfg.name}: ${text}\n`);
  }

  private async nic(port: number): Promise<number> {
    const server = createServer((sock) => {
      sock.on('error', () => {});
      const target = this.vm.sshPort;
      if (!target) return sock.destroy(); // powered off: nothing answers
      const up = connect(target, '127.0.0.1');
      up.on('error', () => sock.destroy());
      sock.on('close', () => up.destroy());
      up.on('close', () => sock.destroy());
      sock.pipe(up).pipe(sock);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.nics.push(server);
    const a = server.address();
    return typeof a === 'object' && a ? a.port : port;
  }

  async start(): Promise<void> {
    const c = this.cfg;
    c.sshPort = await this.nic(c.sshPort);
    c.instancePort = await this.nic(c.instancePort);
    const fd = openSync(this.diskFile, 'a');
    ftruncateSync(fd, c.diskBytes);
    closeSync(fd);
    // The machine's own UEFI variable store, kept across power cycles as NVRAM is.
    const vars = join(c.dir, 'OVMF_VARS.fd');
    if (!existsSync(vars)) copyFileSync(c.firmware.vars, vars);
    this.bmc = await c.bmcGroup.start();
    c.bmcPort = this.bmc.port;
    personalizeSystem(this.bmc.state, this.systemPath, this.uuid, this.macs);
  }

  /** The medium in this System's virtual CD, as a local file (downloaded from its URL). */
  private async insertedFile(): Promise<string | undefined> {
    const slot = this.bmc!.state.cdSlots(this.systemPath).find((s) => s.Inserted === true && typeof s.Image === 'string' && s.Image !== '');
    if (!slot) return undefined;
    try {
      return await localMedium(String(slot.Image), this.cfg.dir);
    } catch (e) {
      // As a BMC that cannot mount the URL: the drive stays empty, the console says why.
      this.note(`${(e as Error).message}: the CD drive stays empty`);
      return undefined;
    }
  }

  private async powerOn(info: BootInfo): Promise<void> {
    if (this.stopped) return;
    await this.vm.stop();
    const target = info.bootSourceOverrideTarget;
    const first: BootFirst = target === 'Cd' || target === 'UsbCd' ? 'cd' : target === 'Pxe' ? 'pxe' : 'disk';
    this.phase = 'starting';
    const cd = await this.insertedFile();
    this.note(`power on; boot override ${target ?? 'none'} (${info.bootSourceOverrideEnabled ?? 'Disabled'}): ${first} first; CD ${cd ?? 'empty'}`);
    this.lastBoot = first;
    await this.vm.start(first, cd);
    this.lastError = undefined;
    this.phase = 'running';
  }

  private async powerOff(): Promise<void> {
    if (!this.vm.running) return;
    await this.vm.stop();
    this.note('power off');
    this.phase = 'off';
  }

  private async mediaChanged(): Promise<void> {
    if (!this.vm.running) return; // the medium goes in at the next power-on
    await this.vm.changeMedium(await this.insertedFile());
  }

  /** The guest reset or powered off (or QEMU died): the BMC sees what a real one would. */
  private exited(why: VmExit, detail: string): void {
    if (this.stopped || !this.bmc) return;
    const state = this.bmc.state;
    this.note(why === 'guest-reset' ? 'the guest restarted' : why === 'guest-shutdown' ? 'the guest powered off' : detail);
    this.phase = why === 'crashed' ? 'failed' : 'off';
    if (why === 'crashed') this.lastError = detail;
    // A restart boots again with the override as it is now (a Once was consumed by the last boot).
    state.transition('Off', why === 'guest-reset' ? 'On' : undefined, this.systemPath);
  }

  async status(): Promise<Record<string, unknown>> {
    const state = this.bmc?.state;
    const slot = state?.cdSlots(this.systemPath).find((s) => s.Inserted === true);
    const boot = state?.bootOf(this.systemPath) ?? {};
    return {
      name: this.cfg.name,
      machine: 'qemu',
      power: state?.powerStateOf(this.systemPath) ?? 'Off',
      phase: this.phase,
      bootOverride: `${boot.BootSourceOverrideTarget ?? 'None'}/${boot.BootSourceOverrideEnabled ?? 'Disabled'}`,
      media: typeof slot?.Image === 'string' ? slot.Image : '',
      lastBoot: this.lastBoot ?? null,
      ssh: `127.0.0.1:${this.cfg.sshPort}`,
      console: this.consoleFile,
      consoleTail: consoleTail(this.consoleFile, 3),
      ...(this.lastError ? { error: this.lastError } : {}),
      bmcRequests: this.bmc?.requestCount() ?? 0,
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.work;
    await this.vm.stop();
    for (const n of this.nics.splice(0)) await new Promise((r) => n.close(r));
  }
}
