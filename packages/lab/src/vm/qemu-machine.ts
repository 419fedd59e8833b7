// One QEMU process: a lab machine while it is powered on. Started paused, given its CD medium
// and asked for its SSH forward through QMP, then let run; stopped with QMP `quit` (killed if it
// does not go). A guest that reboots or powers off ends the process (-no-reboot): the owner
// hears why and decides, as a BMC would, what happens next.
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { findProgram } from 'tsbm/lib/util/find-program.js';
import { type BootFirst, forwardedPort, qemuArgv, type VmSpec } from './qemu-argv.js';
import { QmpClient, type QmpEvent } from './qmp.js';

/** Why a machine's process ended without the lab asking: the guest's own reset or power-off, or a crash. */
export type VmExit = 'guest-reset' | 'guest-shutdown' | 'crashed';

const QEMU = 'qemu-system-x86_64';
const STOP_GRACE_MS = 10_000;
const SETPRIV = findProgram('setpriv', ['/usr/bin', '/bin']);

export class QemuMachine {
  private proc: ChildProcess | undefined;
  private client: QmpClient | undefined;
  private exited: Promise<void> | undefined;
  private stopping = false;
  private lastShutdown: string | undefined;
  private stderr = '';
  /** The host port on 127.0.0.1 that reaches the guest's port 22, while running. */
  sshPort: number | undefined;
  /** What the firmware was told to try first at this power-on. */
  bootFirst: BootFirst | undefined;
  /** The local file in the CD drive, if any. */
  cdFile: string | undefined;

  constructor(
    readonly spec: VmSpec,
    private readonly onExit: (why: VmExit, detail: string) => void,
  ) {}

  /** The QEMU process id while the machine runs. */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get running(): boolean {
    return this.proc !== undefined;
  }

  /** The machine's QMP connection (tests read its state back with it). */
  get qmp(): QmpClient | undefined {
    return this.client;
  }

  async start(first: BootFirst, cdFile: string | undefined): Promise<void> {
    if (this.proc) throw new Error(`${this.spec.name}: the VM is already running`);
    rmSync(this.spec.qmpSocket, { force: true });
    this.stopping = false;
    this.lastShutdown = undefined;
    this.stderr = '';
    this.bootFirst = first;
    // Its own process group: a stop kills QEMU and nothing else; the lab's exit does not wait on it.
    // setpriv --pdeathsig: a lab process that dies (SIGKILL, a crash) takes its VMs with it.
    const argv = [QEMU, ...qemuArgv(this.spec, first)];
    const [cmd, ...args] = SETPRIV ? [SETPRIV, '--pdeathsig', 'KILL', ...argv] : argv;
    const p = spawn(cmd!, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    this.proc = p;
    p.stderr?.setEncoding('utf8');
    p.stderr?.on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-4000);
    });
    this.exited = new Promise<void>((resolve) => {
      p.once('error', (e) => {
        this.stderr += `${e.message}\n`;
        resolve();
      });
      p.once('exit', () => resolve());
    });
    void this.exited.then(() => this.ended(p));
    try {
      const client = await Promise.race([
        QmpClient.connect(this.spec.qmpSocket, (e) => this.event(e)),
        this.exited.then(() => {
          throw new Error(`QEMU exited at start: ${this.stderr.trim().split('\n').slice(-3).join(' / ') || 'no message'}`);
        }),
      ]);
      this.client = client;
      if (cdFile) await this.insert(cdFile);
      const usernet = await client.execute<string>('human-monitor-command', { 'command-line': 'info usernet' });
      this.sshPort = forwardedPort(usernet);
      await client.execute('cont');
    } catch (e) {
      await this.stop();
      throw new Error(`${this.spec.name}: ${(e as Error).message}`);
    }
  }

  private event(e: QmpEvent): void {
    if (e.event === 'SHUTDOWN') this.lastShutdown = String(e.data?.reason ?? '');
  }

  private ended(p: ChildProcess): void {
    if (this.proc !== p) return;
    this.proc = undefined;
    this.client?.close();
    this.client = undefined;
    this.sshPort = undefined;
    if (this.stopping) return;
    const reason = this.lastShutdown;
    const why: VmExit = reason === 'guest-reset' ? 'guest-reset' : reason === 'guest-shutdown' ? 'guest-shutdown' : 'crashed';
    this.onExit(why, why === 'crashed' ? `QEMU ended (${reason || `exit ${p.exitCode ?? p.signalCode}`}): ${this.stderr.trim().split('\n').slice(-2).join(' / ')}` : reason ?? '');
  }

  private async insert(file: string): Promise<void> {
    await this.client!.execute('blockdev-change-medium', { id: 'cd0', filename: file, format: 'raw', 'read-only-mode': 'read-only' });
    this.cdFile = file;
  }

  /** Puts a medium in the CD drive, or empties it (undefined), while the machine runs. */
  async changeMedium(file: string | undefined): Promise<void> {
    if (!this.client) {
      this.cdFile = undefined;
      return;
    }
    // force: the guest may have locked the tray (a mounted CD); a BMC ejects regardless.
    await this.client.execute('eject', { id: 'cd0', force: true }).catch(() => undefined);
    this.cdFile = undefined;
    if (file) await this.insert(file);
  }

  /** Powers the machine off at once (a BMC's ForceOff) and waits until its process is gone. */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p) return;
    this.stopping = true;
    await this.client?.execute('quit').catch(() => undefined);
    const gone = await Promise.race([this.exited!.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), STOP_GRACE_MS).unref())]);
    if (!gone && p.pid) {
      try {
        process.kill(-p.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
      await this.exited;
    }
    this.cdFile = undefined;
  }
}
