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
  /** Every other slot with an image inserted (an installer finds its OEMDRV volume there). */
  otherMedia: { path: string; image: string; types: string[] }[];
}

/** Milliseconds a power transition takes: fixed, or asked at every transition. */
export type PowerDelay = number | ((to: 'On' | 'Off') => number);

export interface StateHooks {
  /** `system` is the System's path: a BMC managing several Systems runs one machine each. */
  onPower?(state: 'On' | 'Off', system: string): void;
  onBoot?(info: BootInfo, system: string): void;
  /** A virtual media slot this System sees was inserted or ejected (a machine changes its CD drive). */
  onMedia?(system: string): void;
}

/**
 * The tree plus what the simulated machines do over time (power transitions, one-shot boot):
 * one machine per member of the Systems collection (blade enclosures and multi-node chassis
 * manage several), each with its own power state, boot override and virtual media.
 */
export class FakeBmcState {
  readonly tree: Map<string, Json>;
  /** The Systems collection's members, in its order. */
  readonly systemPaths: string[];
  private timers = new Set<NodeJS.Timeout>();
  /** Every Reset the BMC accepted, in order (tests assert on the chosen ResetType). */
  readonly resets: string[] = [];
  private readonly slotCache = new Map<string, Json[]>();

  constructor(
    tree: Map<string, Json>,
    private readonly powerDelayMs: PowerDelay,
    private readonly hooks: StateHooks = {},
  ) {
    this.tree = tree;
    const systems = tree.get(odataId(tree.get(ROOT)?.Systems) ?? `${ROOT}/Systems`);
    const members = Array.isArray(systems?.Members) ? systems.Members.map(odataId).filter((p): p is string => p !== undefined && tree.has(p)) : [];
    this.systemPaths = members.length ? members : [`${ROOT}/Systems/1`];
  }

  /** The first System: the machine of a BMC that manages one. */
  get systemPath(): string {
    return this.systemPaths[0]!;
  }

  get(path: string): Json | undefined {
    return this.tree.get(normPath(path));
  }

  systemAt(path = this.systemPath): Json {
    const s = this.tree.get(path);
    if (!s) throw new Error(`mockup has no ${path}`);
    return s;
  }

  get system(): Json {
    return this.systemAt();
  }

  powerStateOf(path = this.systemPath): string {
    return String(this.systemAt(path).PowerState ?? 'Off');
  }

  get powerState(): string {
    return this.powerStateOf();
  }

  bootOf(path = this.systemPath): Json {
    return (this.systemAt(path).Boot as Json | undefined) ?? {};
  }

  get boot(): Json {
    return this.bootOf();
  }

  /**
   * VirtualMedia members that can hold a CD image: where the tree keeps them for this System
   * (its own VirtualMedia collection, or its managers'). A BMC with one System takes any in
   * the tree, as before (some trees link theirs from elsewhere).
   */
  cdSlots(path = this.systemPath): Json[] {
    let slots = this.slotCache.get(path);
    if (!slots) {
      const all = [...this.tree.entries()]
        .filter(([, b]) => String(b['@odata.type'] ?? '').includes('#VirtualMedia.') && !String(b['@odata.type']).includes('Collection'))
        .filter(([p, b]) => {
          const types = Array.isArray(b.MediaTypes) ? b.MediaTypes.map(String) : [];
          return types.some((t) => t === 'CD' || t === 'DVD') || /cd/i.test(p);
        });
      const system = this.systemAt(path);
      const links = system.Links as Json | undefined;
      const managers = Array.isArray(links?.ManagedBy) ? links.ManagedBy.map(odataId).filter((m): m is string => m !== undefined) : [];
      const collections = [odataId(system.VirtualMedia) ?? `${path}/VirtualMedia`, ...managers.map((m) => odataId(this.tree.get(m)?.VirtualMedia) ?? `${m}/VirtualMedia`)];
      const own = all.filter(([p]) => collections.some((c) => p.startsWith(`${c}/`)));
      slots = (this.systemPaths.length > 1 ? own : all).map(([, b]) => b);
      this.slotCache.set(path, slots);
    }
    return slots;
  }

  /** Schedules PoweringOn/Off → final state; `then` chains a second transition (restart). */
  transition(to: 'On' | 'Off', then?: 'On', path = this.systemPath): void {
    const sys = this.systemAt(path);
    const finish = () => {
      sys.PowerState = to;
      this.hooks.onPower?.(to, path);
      if (to === 'On') this.booted(path);
      if (then) this.transition(then, undefined, path);
    };
    const delayMs = typeof this.powerDelayMs === 'function' ? this.powerDelayMs(to) : this.powerDelayMs;
    if (delayMs <= 0) {
      finish();
      return;
    }
    sys.PowerState = to === 'On' ? 'PoweringOn' : 'PoweringOff';
    const t = setTimeout(() => {
      this.timers.delete(t);
      finish();
    }, delayMs);
    this.timers.add(t);
  }

  /** VirtualMedia members with an image inserted that this System can see (all of them in a one-System tree). */
  insertedMedia(path = this.systemPath): { path: string; image: string; types: string[]; body: Json }[] {
    const all = [...this.tree.entries()]
      .filter(([, b]) => String(b['@odata.type'] ?? '').includes('#VirtualMedia.') && !String(b['@odata.type']).includes('Collection'))
      .filter(([, b]) => b.Inserted === true && typeof b.Image === 'string' && b.Image !== '');
    const system = this.systemAt(path);
    const links = system.Links as Json | undefined;
    const managers = Array.isArray(links?.ManagedBy) ? links.ManagedBy.map(odataId).filter((m): m is string => m !== undefined) : [];
    const collections = [odataId(system.VirtualMedia) ?? `${path}/VirtualMedia`, ...managers.map((m) => odataId(this.tree.get(m)?.VirtualMedia) ?? `${m}/VirtualMedia`)];
    const mine = this.systemPaths.length > 1 ? all.filter(([p]) => collections.some((c) => p.startsWith(`${c}/`))) : all;
    return mine.map(([p, b]) => ({ path: p, image: b.Image as string, types: Array.isArray(b.MediaTypes) ? b.MediaTypes.map(String) : [], body: b }));
  }

  /** Tells every System that sees the slot at `slotPath` that its media changed. */
  mediaChanged(slotPath: string): void {
    const slot = this.get(slotPath);
    if (!slot || !this.hooks.onMedia) return;
    for (const system of this.systemPaths) if (this.cdSlots(system).includes(slot) || this.insertedMedia(system).some((m) => m.body === slot)) this.hooks.onMedia(system);
  }

  private booted(path: string): void {
    const boot = this.bootOf(path);
    const slot = this.cdSlots(path).find((s) => s.Inserted === true);
    const target = boot.BootSourceOverrideEnabled === 'Disabled' ? undefined : (boot.BootSourceOverrideTarget as string | undefined);
    this.hooks.onBoot?.(
      {
        bootSourceOverrideTarget: target,
        bootSourceOverrideEnabled: boot.BootSourceOverrideEnabled as string | undefined,
        mediaInserted: slot !== undefined,
        image: typeof slot?.Image === 'string' && slot.Image !== '' ? slot.Image : undefined,
        otherMedia: this.insertedMedia(path)
          .filter((m) => m.body !== slot)
          .map(({ path: p, image, types }) => ({ path: p, image, types })),
      },
      path,
    );
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
