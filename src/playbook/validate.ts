// `tsbm validate` without the CLI: loads playbooks collecting every error, then checks what
// loading alone cannot: template syntax, host patterns, file references, and (given an
// inventory) that every variable a task reads is defined for every host it targets.
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parseError, type SourcePos, TsbmError } from '../errors.js';
import { printable } from '../schema/ajv.js';
import { suggestion } from '../schema/did-you-mean.js';
import { loadYamlFile } from '../schema/yaml-source.js';
import { checkTemplateSyntax } from '../template/analyze.js';
import type { Vars } from '../types.js';
import { type FoundString, nodeStrings, templateStrings, valueAt } from './check-walk.js';
import { sourceOf } from './context.js';
import { displayPath } from './roles.js';
import type { LoadOptions } from './context.js';
import { loadPlaybook, loadTasksFile } from './load.js';
import type { Block, Handler, Play, Playbook, Task, TaskKeywords, TaskNode } from './model.js';
import { type CheckString, HostChecker, type HostInventory, type NodeScope } from './validate-hosts.js';
import { isTemplated } from './values.js';

/** What validate needs from an inventory (the CLI builds it from src/inventory). */
export interface ValidateInventory extends HostInventory {
  /** Host names a pattern selects. */
  select(pattern: string): string[];
}

/**
 * What a run will do, for `tsbm run`'s checks: the hosts each play targets (after --limit and
 * --shard), the tasks it starts (--tags, --start-at-task) and, with --resume, what each host
 * already did. Without it, validate checks every task for every host a play's pattern selects.
 */
export interface RunTarget {
  hosts(play: Play, selected: string[]): string[];
  selected(play: Play, task: Task, chain: readonly TaskKeywords[]): boolean;
  done?(host: string, task: Task): boolean;
}

export interface ValidateOptions extends Omit<LoadOptions, 'onError'> {
  inventory?: ValidateInventory;
  /** Checks a host pattern's syntax (src/inventory/patterns.ts validatePattern). */
  checkPattern?: (pattern: string) => TsbmError | undefined;
  extraVars?: Vars;
  target?: RunTarget;
  /** --check: tsbm_check_mode as the run sees it. */
  check?: boolean;
  /** Filled in with how many per-host evaluations ran and how many hosts reused one (benchmarks). */
  stats?: { evaluations: number; reused: number };
}

interface Scope {
  /** Names only known at run time at this point of the play (registered, set_fact, facts). */
  dynamic: Set<string>;
  /** Enclosing blocks and includes, outermost first. */
  chain: TaskKeywords[];
}

/** Keys of a node whose strings are not rendered as templates (or not eagerly). */
const NOT_RENDERED = new Set(['name', 'register', 'tags', 'notify', 'listen', 'when']);

class Checker {
  readonly errors: TsbmError[] = [];
  private readonly seen = new Set<string>();
  private readonly includeChain: string[] = [];
  private readonly hostChecks: HostChecker | undefined;
  private current: { play: Play; hosts: string[] } | undefined;

  constructor(
    private readonly opts: ValidateOptions,
    private readonly playbookDir: string,
  ) {
    if (opts.inventory) {
      this.hostChecks = new HostChecker(opts.inventory, {
        extraVars: opts.extraVars ?? {},
        playbookDir,
        ...(opts.check !== undefined ? { check: opts.check } : {}),
      });
    }
  }

  /** Every error: load and syntax errors as found, then the per-host ones. */
  all(): TsbmError[] {
    if (this.hostChecks && this.opts.stats) {
      this.opts.stats.evaluations += this.hostChecks.stats.evaluations;
      this.opts.stats.reused += this.hostChecks.stats.reused;
    }
    return [...this.errors, ...(this.hostChecks?.errors() ?? [])];
  }

  add(err: TsbmError): void {
    const key = err.oneLine();
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.errors.push(err);
  }

  play(play: Play): void {
    const ps = sourceOf(play);
    const at = ps ? ps.src.pos([...ps.path, 'hosts']) : (play.keyPos.hosts ?? play.pos);
    // Play vars are rendered lazily, per host; only their template syntax can be checked here.
    if (ps) {
      this.syntaxOnly(
        templateStrings(valueAt(ps.src.value, [...ps.path, 'vars']), ps.src, [...ps.path, 'vars']),
      );
      const refs = valueAt(ps.src.value, [...ps.path, 'vars_files']);
      for (const ref of Array.isArray(refs) ? refs : refs === undefined ? [] : [refs]) {
        if (typeof ref === 'string' && !isTemplated(ref))
          this.varsFileSyntax(isAbsolute(ref) ? ref : join(play.baseDir, ref));
      }
    }
    for (const r of play.roles) {
      for (const sub of ['defaults', 'vars']) {
        for (const f of ['main.yml', 'main.yaml']) this.varsFileSyntax(join(r.path, sub, f));
      }
    }
    // A templated pattern (hosts: "{{ target }}") is only known at run time.
    const templated = isTemplated(play.hosts);
    const bad = templated ? undefined : this.opts.checkPattern?.(play.hosts);
    const playName = play.keyPos.name ? `play "${printable(play.name)}"` : 'this play';
    if (bad) this.add(parseError(`${bad.message} in ${playName}`, at, bad.hint));
    const matched = templated ? [] : (this.opts.inventory?.select(play.hosts) ?? []);
    const hosts = this.opts.target ? this.opts.target.hosts(play, matched) : matched;
    this.current = { play, hosts };
    const scope: Scope = {
      dynamic: new Set(play.gatherFacts ? ['facts', 'ansible_facts'] : []),
      chain: [],
    };
    const walk = (nodes: TaskNode[]) => {
      for (const n of nodes) this.node(n, scope);
    };
    walk(play.preTasks);
    walk(play.roleTasks);
    walk(play.tasks);
    walk(play.postTasks);
    for (const h of play.handlers) this.node(h, scope);
    this.notifies(play);
  }

  private syntaxOnly(found: FoundString[]): void {
    for (const f of found) {
      const err = checkTemplateSyntax(f.value, f.src.pos(f.path));
      if (err) this.add(err);
    }
  }

  /** Template syntax in a vars file (vars_files, role defaults/vars); a missing file was reported by the loader. */
  private varsFileSyntax(file: string): void {
    if (!existsSync(file)) return;
    try {
      const src = loadYamlFile(file);
      this.syntaxOnly(templateStrings(src.value, src, []));
    } catch (e) {
      if (!(e instanceof TsbmError)) throw e;
      this.add(e);
    }
  }

  /** Every `notify` must name a handler (or a `listen` topic) of the play, as in Ansible. */
  private notifies(play: Play): void {
    const known = new Set(play.handlers.flatMap((h) => h.listen));
    const visit = (nodes: TaskNode[]) => {
      for (const n of nodes) {
        if (n.kind === 'block') visit([...n.block, ...n.rescue, ...n.always]);
        if (n.kind !== 'task') continue;
        for (const name of n.notify) {
          if (known.has(name) || isTemplated(name)) continue;
          this.add(
            parseError(
              `task "${printable(n.name ?? n.module)}" notifies "${printable(name)}", but the play has no such handler${suggestion(name, known)}`,
              n.keyPos.notify ?? n.pos,
              known.size > 0 ? `handlers: ${[...known].join(', ')}` : 'add it under handlers:',
            ),
          );
        }
      }
    };
    visit([...play.preTasks, ...play.roleTasks, ...play.tasks, ...play.postTasks, ...play.handlers]);
  }

  private node(n: TaskNode | Handler, outer: Scope): void {
    const chain = [...outer.chain, n];
    // A task's loop variable and its own register (until/failed_when/changed_when) are its own.
    let dynamic: ReadonlySet<string> = outer.dynamic;
    if (n.kind === 'task' && (n.register || n.loop !== undefined)) {
      const own = new Set(outer.dynamic);
      if (n.register) own.add(n.register);
      if (n.loop !== undefined) {
        own.add(n.loopControl?.loopVar ?? 'item');
        if (n.loopControl?.indexVar) own.add(n.loopControl.indexVar);
      }
      dynamic = own;
    }
    this.strings(n, nodeStrings(n), { dynamic, chain });
    if (n.kind === 'task') this.fileRefs(n);
    if (n.kind === 'block') {
      const b = n as Block;
      const inner: Scope = { dynamic: outer.dynamic, chain };
      for (const c of [...b.block, ...b.rescue, ...b.always]) this.node(c, inner);
    }
    // (an include_role with a templated name is found when the run reaches it)
    if (n.kind === 'include_tasks' && !n.includeRole) this.include(n.file, n.pos, n, { dynamic: outer.dynamic, chain });
    // What a task registers or sets is visible to every later task of the play.
    if (n.kind === 'task') {
      if (n.register) outer.dynamic.add(n.register);
      // Any module may return `facts`/`ansible_facts`; the executor makes them host variables.
      outer.dynamic.add('facts');
      outer.dynamic.add('ansible_facts');
      if (n.module === 'set_fact')
        for (const k of Object.keys(n.args)) if (k !== 'cacheable') outer.dynamic.add(k);
    }
  }

  private include(file: string, from: SourcePos, node: TaskNode, scope: Scope): void {
    if (isTemplated(file)) return;
    const abs = resolve(file);
    if (this.includeChain.includes(abs)) return; // a recursive include is legal at run time (with a condition)
    this.includeChain.push(abs);
    try {
      const tasks = loadTasksFile(displayPath(file), from, this.playbookDir, node.role, {
        ...this.opts,
        onError: (e) => this.add(e),
      });
      for (const t of tasks) this.node(t, scope);
    } catch (e) {
      if (e instanceof TsbmError) this.add(e);
      else throw e;
    } finally {
      this.includeChain.pop();
    }
  }

  /** Template syntax of every string; then, with an inventory, what each targeted host would read. */
  private strings(n: TaskNode, found: FoundString[], scope: NodeScope): void {
    const ok: FoundString[] = [];
    for (const f of found) {
      const err = checkTemplateSyntax(f.value, f.src.pos(f.path), f.condition);
      if (err) this.add(err);
      else ok.push(f);
    }
    if (!this.hostChecks || !this.current) return;
    const hosts = this.targets(n, scope.chain.slice(0, -1));
    if (hosts.length === 0) return;
    const base = sourceOf(n)?.path.length ?? 0;
    const first: CheckString[] = [];
    const strings: CheckString[] = [];
    for (const f of ok) {
      const key = String(f.path[base]);
      if (NOT_RENDERED.has(key) || !f.value.includes('{{') && !f.condition) continue;
      const s = { value: f.value, pos: f.src.pos(f.path), condition: f.condition };
      (key === 'loop' ? first : strings).push(s);
    }
    const whens = scope.chain.flatMap((c) => c.when);
    if (first.length + strings.length + whens.length === 0) return;
    const what = n.name
      ? `task "${printable(n.name)}"`
      : n.kind === 'task'
        ? `task ${n.module}`
        : n.kind === 'include_tasks'
          ? n.includeRole
            ? `include_role ${printable(n.includeRole.name)}`
            : `include_tasks ${printable(n.file)}`
          : 'this block';
    this.hostChecks.node(this.current.play, this.current.hosts, { what, first, whens, strings }, scope, hosts);
  }

  /** The hosts a node runs on in this run: all the play's, minus tags, --start-at-task and --resume. */
  private targets(n: TaskNode, chain: readonly TaskKeywords[]): string[] {
    const cur = this.current!;
    const t = this.opts.target;
    if (!t || n.kind === 'include_tasks') return cur.hosts;
    if (n.kind === 'block') {
      // a block's own conditions and vars only matter to the tasks of it the run starts
      const inner = [...chain, n];
      const anySelected = (nodes: TaskNode[], ch: TaskKeywords[]): boolean =>
        nodes.some((c) =>
          c.kind === 'task'
            ? t.selected(cur.play, c, ch)
            : c.kind === 'block'
              ? anySelected([...c.block, ...c.rescue, ...c.always], [...ch, c])
              : true,
        );
      return anySelected([...n.block, ...n.rescue, ...n.always], inner) ? cur.hosts : [];
    }
    if (!t.selected(cur.play, n, chain)) return [];
    return t.done ? cur.hosts.filter((h) => !t.done!(h, n)) : cur.hosts;
  }

  /** `src` of copy/template must exist (role files/ and templates/ first, then beside the playbook). */
  private fileRefs(t: Task): void {
    const src = t.args.src;
    if (!['copy', 'template'].includes(t.module) || typeof src !== 'string' || isTemplated(src)) return;
    const sub = t.module === 'template' ? 'templates' : 'files';
    const candidates = isAbsolute(src)
      ? [src]
      : [
          ...(t.role ? [join(t.role.path, sub, src), join(t.role.path, src)] : []),
          join(t.baseDir, sub, src),
          join(t.baseDir, src),
        ];
    if (candidates.some((c) => existsSync(c))) return;
    const s = nodeStrings(t).find((f) => f.path[f.path.length - 1] === 'src');
    this.add(
      parseError(
        `file not found: "${src}" (src of ${t.module} in task "${t.name ?? t.module}")`,
        s ? s.src.pos(s.path) : t.argsPos,
        `looked in ${candidates.join(', ')}`,
      ),
    );
  }
}

/** Validates playbooks; returns every error found (empty when all is well). */
export function validatePlaybooks(files: string[], opts: ValidateOptions = {}): TsbmError[] {
  const all: TsbmError[] = [];
  for (const file of files) {
    const loadErrors: TsbmError[] = [];
    const pb = loadPlaybook(file, { ...opts, onError: (e) => loadErrors.push(e) });
    all.push(...validateLoaded(pb, loadErrors, opts));
  }
  return all;
}

/** The checks on a playbook already loaded (collecting `loadErrors`), errors in reading order. */
export function validateLoaded(pb: Playbook, loadErrors: TsbmError[], opts: ValidateOptions = {}): TsbmError[] {
  const checker = new Checker(opts, pb.dir);
  for (const e of loadErrors) checker.add(e);
  for (const play of pb.plays) checker.play(play);
  // Report in reading order (load errors and later checks interleave by position).
  const key = (e: TsbmError) => [e.pos?.file ?? '', e.pos?.line ?? 0, e.pos?.col ?? 0] as const;
  return checker.all().sort((a, b) => {
    const [fa, la, ca] = key(a);
    const [fb, lb, cb] = key(b);
    return fa === fb ? la - lb || ca - cb : fa < fb ? -1 : 1;
  });
}
