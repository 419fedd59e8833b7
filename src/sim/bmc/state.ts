// The fake BMC's in-memory Redfish tree: loaded once from a mockup folder (never written back),
// then changed by PATCH, actions and the power timeline. Pure state; HTTP lives in server.ts.
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

export type Json = Record<string, unknown>;

export const ROOT = '/redfish/v1';

/** `/redfish/v1/Systems/1/` and `/redfish/v1/Systems/1` are the same resource. */
export function normPath(p: string): string {
  const noQuery = p.split('?')[0] ?? p;
  const trimmed = noQuery.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

// Parsed once per directory per process: a 1000-node lab would otherwise read and parse the
// same few hundred files a thousand times. Each BMC gets its own deep copy (its state).
const parsed = new Map<string, Promise<Map<string, Json>>>();

export async function loadTree(dir: string): Promise<Map<string, Json>> {
  let p = parsed.get(dir);
  if (!p) {
    p = readTree(dir);
    parsed.set(dir, p);
    p.catch(() => parsed.delete(dir));
  }
  return structuredClone(await p);
}

async function readTree(dir: string): Promise<Map<string, Json>> {
  const tree = new Map<string, Json>();
  async function walk(rel: string): Promise<void> {
    const abs = join(dir, rel);
    for (const entry of await readdir(abs, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (rel === '' && entry.name.startsWith('_')) continue; // `_extra/` sits outside the served tree
        await walk(rel ? `${rel}/${entry.name}` : entry.name);
      } else if (entry.name === 'index.json') {
        const body = JSON.parse(await readFile(join(abs, entry.name), 'utf8')) as Json;
        tree.set(normPath(rel ? `${ROOT}/${rel}` : ROOT), body);
      }
    }
  }
  if (!(await stat(dir)).isDirectory()) throw new Error(`${dir} is not a mockup directory`);
  await walk('');
  return tree;
}

export function odataId(link: unknown): string | undefined {
  if (link && typeof link === 'object' && '@odata.id' in link) {
    const id = (link as Json)['@odata.id'];
    return typeof id === 'string' ? normPath(id) : undefined;
  }
  return undefined;
}

/** A weak ETag over the body without its own etag, so any change yields a new tag. */
export function etagOf(body: Json): string {
  return taggedJson(body).etag;
}

/** The body as JSON with `@odata.etag` (last) and the tag itself, from one serialization. */
export function taggedJson(body: Json): { text: string; etag: string } {
  const { '@odata.etag': _ignored, ...rest } = body;
  const plain = JSON.stringify(rest);
  const etag = `W/"${createHash('sha1').update(plain).digest('hex').slice(0, 16)}"`;
  const tag = `"@odata.etag":${JSON.stringify(etag)}`;
  return { text: plain === '{}' ? `{${tag}}` : `${plain.slice(0, -1)},${tag}}`, etag };
}

export interface ActionRef {
  resource: string;
  /** e.g. `#ComputerSystem.Reset` or `#HpeiLOVirtualMedia.InsertVirtualMedia` */
  name: string;
  def: Json;
}

/** Action targets to their action, per tree: built on first use, so a POST is not a walk of the whole tree. */
const actionIndexes = new WeakMap<Map<string, Json>, Map<string, ActionRef>>();

function indexActions(tree: Map<string, Json>): Map<string, ActionRef> {
  const index = new Map<string, ActionRef>();
  for (const [resource, body] of tree) {
    for (const actions of actionBlocks(body)) {
      for (const [name, def] of Object.entries(actions)) {
        if (!name.startsWith('#') || !def || typeof def !== 'object') continue;
        const target = (def as Json).target;
        if (typeof target !== 'string') continue;
        // The first resource that names a target keeps it, as a walk in tree order would find it.
        const key = normPath(target);
        if (!index.has(key)) index.set(key, { resource, name, def: def as Json });
      }
    }
  }
  return index;
}

/** Finds the action whose `target` is `path`, in `Actions` or `Actions.Oem.*` / `Oem.*.Actions`. */
export function findAction(tree: Map<string, Json>, path: string): ActionRef | undefined {
  const want = normPath(path);
  const known = actionIndexes.get(tree)?.get(want);
  if (known) return known;
  // Not indexed (yet): index the tree as it is now; resources added since are then found too.
  const index = indexActions(tree);
  actionIndexes.set(tree, index);
  return index.get(want);
}

function actionBlocks(body: Json): Json[] {
  const out: Json[] = [];
  const actions = body.Actions as Json | undefined;
  if (actions && typeof actions === 'object') {
    out.push(actions);
    const oem = actions.Oem as Json | undefined;
    if (oem && typeof oem === 'object') out.push(oem);
  }
  const oem = body.Oem as Json | undefined;
  if (oem && typeof oem === 'object') {
    for (const vendor of Object.values(oem)) {
      const a = vendor && typeof vendor === 'object' ? ((vendor as Json).Actions as Json | undefined) : undefined;
      if (a && typeof a === 'object') out.push(a);
    }
  }
  return out;
}

export interface BootInfo {
  bootSourceOverrideTarget: string | undefined;
  bootSourceOverrideEnabled: string | undefined;
  mediaInserted: boolean;
  image: string | undefined;
}

export interface StateHooks {
  onPower?(state: 'On' | 'Off'): void;
  onBoot?(info: BootInfo): void;
}

/** The tree plus what the simulated machine does over time (power transitions, one-shot boot). */
export class FakeBmcState {
  readonly tree: Map<string, Json>;
  readonly systemPath: string;
  private timers = new Set<NodeJS.Timeout>();
  /** Every Reset the BMC accepted, in order (tests assert on the chosen ResetType). */
  readonly resets: string[] = [];

  constructor(
    tree: Map<string, Json>,
    private readonly powerDelayMs: number,
    private readonly hooks: StateHooks = {},
  ) {
    this.tree = tree;
    const systems = tree.get(odataId(tree.get(ROOT)?.Systems) ?? `${ROOT}/Systems`);
    const first = Array.isArray(systems?.Members) ? odataId(systems.Members[0]) : undefined;
    this.systemPath = first ?? `${ROOT}/Systems/1`;
  }

  get(path: string): Json | undefined {
    return this.tree.get(normPath(path));
  }

  get system(): Json {
    const s = this.tree.get(this.systemPath);
    if (!s) throw new Error(`mockup has no ${this.systemPath}`);
    return s;
  }

  get powerState(): string {
    return String(this.system.PowerState ?? 'Off');
  }

  get boot(): Json {
    return (this.system.Boot as Json | undefined) ?? {};
  }

  /** VirtualMedia members that can hold a CD image, wherever the tree keeps them. */
  cdSlots(): Json[] {
    return [...this.tree.entries()]
      .filter(([, b]) => String(b['@odata.type'] ?? '').includes('#VirtualMedia.') && !String(b['@odata.type']).includes('Collection'))
      .filter(([p, b]) => {
        const types = Array.isArray(b.MediaTypes) ? b.MediaTypes.map(String) : [];
        return types.some((t) => t === 'CD' || t === 'DVD') || /cd/i.test(p);
      })
      .map(([, b]) => b);
  }

  /** Schedules PoweringOn/Off → final state; `then` chains a second transition (restart). */
  transition(to: 'On' | 'Off', then?: 'On'): void {
    const sys = this.system;
    const finish = () => {
      sys.PowerState = to;
      this.hooks.onPower?.(to);
      if (to === 'On') this.booted();
      if (then) this.transition(then);
    };
    if (this.powerDelayMs <= 0) {
      finish();
      return;
    }
    sys.PowerState = to === 'On' ? 'PoweringOn' : 'PoweringOff';
    const t = setTimeout(() => {
      this.timers.delete(t);
      finish();
    }, this.powerDelayMs);
    this.timers.add(t);
  }

  private booted(): void {
    const boot = this.boot;
    const slot = this.cdSlots().find((s) => s.Inserted === true);
    const target = boot.BootSourceOverrideEnabled === 'Disabled' ? undefined : (boot.BootSourceOverrideTarget as string | undefined);
    this.hooks.onBoot?.({
      bootSourceOverrideTarget: target,
      bootSourceOverrideEnabled: boot.BootSourceOverrideEnabled as string | undefined,
      mediaInserted: slot !== undefined,
      image: typeof slot?.Image === 'string' && slot.Image !== '' ? slot.Image : undefined,
    });
    // A one-time override is consumed by the boot it applied to.
    if (boot.BootSourceOverrideEnabled === 'Once') {
      boot.BootSourceOverrideEnabled = 'Disabled';
      boot.BootSourceOverrideTarget = 'None';
    }
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
