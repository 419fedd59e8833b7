// One fake BMC and the simulated nodes behind it. A tree with one System gives each node a BMC
// of its own; a tree whose BMC manages several Systems (a blade enclosure, a multi-node chassis)
// puts that many nodes behind one BMC address, each node one System, told apart by
// `redfish_system_id` as an operator's inventory does.
import { type FakeBmc, startFakeBmc } from '../bmc/server.js';
import { type BootInfo, loadTree, normPath, odataId, type PowerDelay, ROOT } from '../bmc/state.js';
import { TsbmError } from 'tsbm/lib/errors.js';
import { seededRandom } from 'tsbm/lib/util/seeded-random.js';
import type { NodeFaults } from './faults.js';

export interface SystemHooks {
  onPower(state: 'On' | 'Off'): void;
  onBoot(info: BootInfo): void;
  onMedia?(): void;
}

export interface BmcGroupOptions {
  mockupDir: string;
  username: string;
  password: string;
  powerDelayMs: number;
  /** BMC faults (503s, latency, resets, power_delay) act on the BMC, so on every node behind it: the first node's. */
  faults: NodeFaults;
  /** Seeds a random power_delay (the first node's index), so a run can be repeated. */
  seed: number;
}

/** The Systems a tree's BMC manages (the Systems collection's members that exist in it). */
export async function systemsOf(mockupDir: string): Promise<string[]> {
  const tree = await loadTree(mockupDir);
  const coll = tree.get(odataId(tree.get(ROOT)?.Systems) ?? `${ROOT}/Systems`);
  const members = Array.isArray(coll?.Members) ? coll.Members.map(odataId).filter((p): p is string => p !== undefined && tree.has(normPath(p))) : [];
  return members.length ? members : [`${ROOT}/Systems/1`];
}

export class BmcGroup {
  bmc: FakeBmc | undefined;
  private readonly nodes = new Map<string, SystemHooks>();
  private starting: Promise<FakeBmc> | undefined;

  constructor(
    readonly opts: BmcGroupOptions,
    /** The Systems of the tree, in order; node k of the group is System k. */
    readonly systems: string[],
  ) {}

  /** True when the BMC manages several Systems: its nodes need `redfish_system_id`. */
  get shared(): boolean {
    return this.systems.length > 1;
  }

  get full(): boolean {
    return this.nodes.size >= this.systems.length;
  }

  /** The next free System for a node, whose power and boot events go to `hooks`. */
  attach(hooks: SystemHooks): string {
    const system = this.systems[this.nodes.size];
    if (!system) throw new Error('internal: BMC group is full');
    this.nodes.set(system, hooks);
    return system;
  }

  /** Starts the BMC once: its first node to start does, the others wait for it. */
  start(): Promise<FakeBmc> {
    this.starting ??= this.launch();
    return this.starting;
  }

  private async launch(): Promise<FakeBmc> {
    const f = this.opts.faults;
    this.bmc = await startFakeBmc({
      mockupDir: this.opts.mockupDir,
      host: '127.0.0.1',
      port: 0,
      username: this.opts.username,
      password: this.opts.password,
      powerDelayMs: this.powerDelay(),
      faults: {
        ...(f.bmc503 !== undefined ? { rate503: f.bmc503 } : {}),
        ...(f.bmcLatencyMs !== undefined ? { latencyMs: f.bmcLatencyMs } : {}),
        ...(f.bmcReset !== undefined ? { resetRate: f.bmcReset } : {}),
      },
      hooks: {
        onPower: (s, system) => this.nodes.get(system)?.onPower(s),
        onBoot: (info, system) => this.nodes.get(system)?.onBoot(info),
        onMedia: (system) => this.nodes.get(system)?.onMedia?.(),
      },
    });
    this.checkMedia();
    return this.bmc;
  }

  /** The lab's power delay, or the power_delay fault's: fixed, or random per change. */
  private powerDelay(): PowerDelay {
    const own = this.opts.faults.powerDelayMs;
    if (!own) return this.opts.powerDelayMs;
    if (own.min === own.max) return own.min;
    const next = seededRandom(this.opts.seed);
    return () => Math.round(own.min + next() * (own.max - own.min));
  }

  /** Each System needs a CD slot of its own, or its nodes would insert into each other's. */
  private checkMedia(): void {
    if (!this.shared) return;
    const state = this.bmc!.state;
    const owner = new Map<object, string>();
    for (const system of this.systems) {
      const slots = state.cdSlots(system);
      const hint = 'give each System its own VirtualMedia collection (under the System, or under a Manager of its own)';
      if (slots.length === 0) throw new TsbmError('options', `--mockup ${this.opts.mockupDir}: System ${system} has no virtual CD of its own`, { hint });
      for (const slot of slots) {
        const other = owner.get(slot);
        if (other) throw new TsbmError('options', `--mockup ${this.opts.mockupDir}: Systems ${other} and ${system} share the virtual CD ${String(slot['@odata.id'])}`, { hint });
        owner.set(slot, system);
      }
    }
  }

  async close(): Promise<void> {
    await this.starting?.catch(() => undefined);
    await this.bmc?.close();
  }
}
