// The per-host half of validate (and of `tsbm run`'s checks): each task's templates are evaluated
// for each host it targets, against the variables known before the run, in the executor's
// precedence (src/executor/vars.ts), and every read that would fail is reported once, with the
// hosts it fails for. Reads are followed to the last key (`instance_info.boot_iso`), through
// variables whose values are templates themselves; conditions the run would decide the same way
// for a host (`defined x`, `eq kind "iso"`) skip what the run would skip.
//
// Cost: hosts usually share most of their variables (group vars are shared objects), so a
// task's result on one host is reused for every host whose variables read by that evaluation
// are the very same values (memo keyed by the identity of each value read).
import { formatPos, type SourcePos, TsbmError } from '../errors.js';
import {
  MISSING,
  missMessage,
  type StaticMiss,
  StaticEvaluator,
  type StaticView,
  UNKNOWN,
} from '../template/static-eval.js';
import type { Vars } from '../types.js';
import { assignVars, MERGED_MAPPINGS } from '../util/merge-vars.js';
import { asData } from '../util/unsafe-text.js';
import type { Expr, Play, RoleContext, TaskKeywords } from './model.js';

/** What the per-host checks need from an inventory. */
export interface HostInventory {
  /** Every host name (for hostvars). */
  hosts(): string[];
  /** A host's inventory variables (group vars ... host_vars), raw. */
  vars(host: string): Vars;
  /** inventory_hostname, inventory_hostname_short, group_names, groups. */
  magic(host: string): Vars;
}

/** A string of a node, with where it is and whether it is a bare condition. */
export interface CheckString {
  value: string;
  pos: SourcePos;
  condition: boolean;
}

/** What one node (task, handler, block, include) renders on a host, in the run's order. */
export interface NodeChecks {
  /** How messages name the node: `task "Pull"`. */
  what: string;
  /** Rendered before any condition (a task's loop). */
  first: CheckString[];
  /** The conditions deciding whether the node runs on a host, outermost first. */
  whens: Expr[];
  /** Rendered when the node runs. */
  strings: CheckString[];
}

/** Where a node's variables come from, besides the inventory and the play. */
export interface NodeScope {
  /** Names only known at run time (registered, set_fact, facts, loop variables). */
  dynamic: ReadonlySet<string>;
  /** Enclosing blocks and includes, outermost first, then the node itself. */
  chain: readonly TaskKeywords[];
}

export interface HostCheckOptions {
  extraVars: Vars;
  /** tsbm_check_mode as the run will see it (unknown for validate). */
  check?: boolean;
  playbookDir: string;
}

/** Names the executor provides that are not modelled here: known only at run time. */
const RUN_TIME_ONLY = new Set([
  'tsbm_verbosity',
  'inventory_dir',
  'omit',
  'ansible_play_batch',
  'ansible_loop',
  'ansible_loop_var',
  'role_name',
  'role_path',
  'tsbm_failed_task',
  'tsbm_failed_result',
]);

interface Found {
  pos: SourcePos;
  miss: StaticMiss;
  what: string;
  hosts: string[];
}

interface MissAt {
  pos: SourcePos;
  miss: StaticMiss;
}

/** Memo of one node: evaluations keyed by the names they read and the values those had. */
interface Memo {
  /** name list (joined) -> names, and value key -> result */
  groups: Map<string, { names: string[]; results: Map<string, MissAt[]> }>;
}

const objectIds = new WeakMap<object, number>();
let nextId = 1;

/** Identity key of a value: equal keys mean an evaluation cannot tell the values apart. */
function valueKey(v: unknown): string {
  if (v === UNKNOWN) return 'U';
  if (v === MISSING) return 'M';
  if (v === null || typeof v !== 'object') return `${typeof v}:${String(v)}`;
  // Short lists of plain values (group_names, a fresh array per host) compare by content.
  if (Array.isArray(v) && v.length <= 32 && v.every((x) => x === null || typeof x !== 'object'))
    return `a:${JSON.stringify(v)}`;
  let id = objectIds.get(v);
  if (id === undefined) {
    id = nextId++;
    objectIds.set(v, id);
  }
  return `o:${id}`;
}

/** An undefined read, with every host it fails for (the JSON events list them). */
class HostVarError extends TsbmError {
  constructor(
    message: string,
    pos: SourcePos,
    hint: string,
    readonly hosts: readonly string[],
  ) {
    super('parse', message, { pos, hint });
  }
}

export class HostChecker {
  private readonly invVars = new Map<string, Vars>();
  private readonly magicVars = new Map<string, Vars>();
  private readonly found = new Map<string, Found>();
  private known: Set<string> | undefined;
  /** How many node evaluations ran, and how many hosts reused one (for the benchmark). */
  readonly stats = { evaluations: 0, reused: 0 };
  /** Merged node mappings by the identity of their layers: hosts sharing them share one value (the memo's key). */
  private readonly merged = new Map<string, unknown>();

  constructor(
    private readonly inv: HostInventory,
    private readonly opts: HostCheckOptions,
  ) {}

  private inventoryVars(host: string): Vars {
    let v = this.invVars.get(host);
    if (!v) {
      v = this.inv.vars(host);
      this.invVars.set(host, v);
    }
    return v;
  }

  private magic(host: string): Vars {
    let v = this.magicVars.get(host);
    if (!v) {
      v = this.inv.magic(host);
      this.magicVars.set(host, v);
    }
    return v;
  }

  /** `hostvars` as the executor shows it: another host's raw inventory vars, facts, extra vars, magic. */
  private hostvarsView(dynamic: ReadonlySet<string>): StaticView {
    this.known ??= new Set(this.inv.hosts());
    const known = this.known;
    const hostView = (h: string): StaticView => ({
      staticView: true,
      get: (k) => {
        if (k === 'inventory_hostname') return asData(h);
        const m = this.magic(h);
        if (Object.hasOwn(m, k)) return m[k];
        if (dynamic.has(k) || k === 'facts' || k === 'ansible_facts') return UNKNOWN;
        if (MERGED_MAPPINGS.has(k)) return this.mergeLayers(k, [this.inventoryVars(h), this.opts.extraVars]);
        if (Object.hasOwn(this.opts.extraVars, k)) return this.opts.extraVars[k];
        const v = this.inventoryVars(h);
        return Object.hasOwn(v, k) ? v[k] : MISSING;
      },
    });
    const views = new Map<string, StaticView>();
    return {
      staticView: true,
      get: (h) => {
        if (!known.has(h)) return MISSING;
        let v = views.get(h);
        if (!v) {
          v = hostView(h);
          views.set(h, v);
        }
        return v;
      },
    };
  }

  /** A root variable of `host` for a node, in the executor's precedence (highest first). */
  private lookup(
    name: string,
    host: string,
    play: Play,
    playHosts: string[],
    scope: NodeScope,
    role: RoleContext | undefined,
    hostvars: StaticView,
  ): unknown {
    if (name === 'inventory_hostname') return asData(host);
    const magic = this.magic(host);
    if (Object.hasOwn(magic, name)) return magic[name];
    switch (name) {
      case 'hostvars':
        return hostvars;
      case 'playbook_dir':
        return this.opts.playbookDir;
      case 'tsbm_check_mode':
      case 'ansible_check_mode':
        return this.opts.check ?? UNKNOWN;
      case 'ansible_play_hosts':
      case 'play_hosts':
        return playHosts;
    }
    const extra = this.opts.extraVars;
    const { chain } = scope;
    // driver_info, instance_info, properties: every layer's keys, merged as the executor does
    if (MERGED_MAPPINGS.has(name) && !scope.dynamic.has(name)) {
      const layers = [
        ...(role ? [role.defaults] : []),
        this.inventoryVars(host),
        play.vars,
        ...play.varsFiles,
        ...(role ? [role.vars] : []),
        ...chain.map((n) => n.vars),
        extra,
      ];
      return this.mergeLayers(name, layers);
    }
    if (Object.hasOwn(extra, name)) return extra[name];
    if (scope.dynamic.has(name)) return UNKNOWN;
    for (let i = chain.length - 1; i >= 0; i--) {
      const v = chain[i]!.vars;
      if (Object.hasOwn(v, name)) return v[name];
    }
    if (role && Object.hasOwn(role.vars, name)) return role.vars[name];
    for (let i = play.varsFiles.length - 1; i >= 0; i--) {
      const f = play.varsFiles[i]!;
      if (Object.hasOwn(f, name)) return f[name];
    }
    if (Object.hasOwn(play.vars, name)) return play.vars[name];
    const inv = this.inventoryVars(host);
    if (Object.hasOwn(inv, name)) return inv[name];
    if (role && Object.hasOwn(role.defaults, name)) return role.defaults[name];
    if (RUN_TIME_ONLY.has(name)) return UNKNOWN;
    return MISSING;
  }

  /** `name` from layers given lowest first, merged key by key (util/merge-vars.ts); MISSING when none has it. */
  private mergeLayers(name: string, layers: readonly Vars[]): unknown {
    const values = layers.filter((l) => Object.hasOwn(l, name)).map((l) => l[name]);
    if (values.length <= 1) return values.length ? values[0] : MISSING;
    const key = `${name}\0${values.map(valueKey).join('\0')}`;
    if (!this.merged.has(key)) {
      const out: Vars = {};
      for (const v of values) assignVars(out, { [name]: v });
      this.merged.set(key, out[name]);
    }
    return this.merged.get(key);
  }

  /** Evaluates a node on each host (reusing results across hosts that read the same values). */
  node(
    play: Play,
    playHosts: string[],
    checks: NodeChecks,
    scope: NodeScope,
    hosts: readonly string[],
  ): void {
    if (hosts.length === 0) return;
    const hostvars = this.hostvarsView(scope.dynamic);
    let role: RoleContext | undefined;
    for (let i = scope.chain.length - 1; i >= 0 && !role; i--) role = scope.chain[i]!.role;
    const memo: Memo = { groups: new Map() };
    for (const host of hosts) {
      const root = (n: string) => this.lookup(n, host, play, playHosts, scope, role, hostvars);
      let result: MissAt[] | undefined;
      for (const g of memo.groups.values()) {
        let key = '';
        for (const n of g.names) key += `${valueKey(root(n))}\0`;
        result = g.results.get(key);
        if (result) break;
      }
      if (result) this.stats.reused++;
      else {
        this.stats.evaluations++;
        const reads = new Map<string, unknown>();
        result = evaluate(
          new StaticEvaluator({
            root: (n) => {
              const v = root(n);
              if (!reads.has(n)) reads.set(n, v);
              return v;
            },
          }),
          checks,
        );
        const names = [...reads.keys()];
        const id = names.join('\0');
        let g = memo.groups.get(id);
        if (!g) {
          g = { names, results: new Map() };
          memo.groups.set(id, g);
        }
        let key = '';
        for (const n of names) key += `${valueKey(reads.get(n))}\0`;
        g.results.set(key, result);
      }
      for (const m of result) this.record(m, checks.what, host);
    }
  }

  private record(m: MissAt, what: string, host: string): void {
    const key = `${formatPos(m.pos)}\0${m.miss.path}\0${m.miss.missing}\0${m.miss.via.join('.')}`;
    let f = this.found.get(key);
    if (!f) {
      f = { pos: m.pos, miss: m.miss, what, hosts: [] };
      this.found.set(key, f);
    }
    if (f.hosts[f.hosts.length - 1] !== host && !f.hosts.includes(host)) f.hosts.push(host);
  }

  /** Every failing read found so far, one error each, naming the hosts. */
  errors(): TsbmError[] {
    return [...this.found.values()].map((f) => {
      const { miss } = f;
      const shown = f.hosts.length > 3 ? `${f.hosts.slice(0, 3).join(', ')} and ${f.hosts.length - 3} more` : f.hosts.join(', ');
      const via = miss.via.length ? ` (read through ${miss.via.map((v) => `"${v}"`).join(' -> ')})` : '';
      const root = miss.path.split('.')[0]!;
      const hint =
        miss.missing === root
          ? `define "${root}" in the inventory, the play's vars or with -e, or use "default ${miss.path} ..."`
          : `give "${miss.missing}" a value for ${f.hosts.length > 1 ? 'these hosts' : 'this host'}, or use "default ${miss.path} ..."`;
      return new HostVarError(
        `${missMessage(miss)}${via} in ${f.what} for host${f.hosts.length > 1 ? 's' : ''} ${shown}`,
        f.pos,
        hint,
        f.hosts,
      );
    });
  }
}

/** One node on one host, in the run's order: loop, conditions (stop when false), the rest. */
function evaluate(ev: StaticEvaluator, c: NodeChecks): MissAt[] {
  const out: MissAt[] = [];
  const run = (pos: SourcePos, f: () => unknown): unknown => {
    const before = ev.misses.length;
    const v = f();
    for (const miss of ev.misses.slice(before)) out.push({ pos, miss });
    return v;
  };
  for (const s of c.first) {
    const v = run(s.pos, () => ev.value(s.value));
    if (Array.isArray(v) && v.length === 0) return out; // an empty loop runs nothing
  }
  for (const w of c.whens) {
    if (run(w.pos, () => ev.condition(w.expr)) === false) return out;
  }
  for (const s of c.strings) run(s.pos, () => (s.condition ? ev.condition(s.value) : ev.value(s.value)));
  return out;
}
