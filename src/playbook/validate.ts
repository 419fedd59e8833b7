// `tsbm validate` without the CLI: loads playbooks collecting every error, then checks what
// loading alone cannot: template syntax, host patterns, file references, and (given an
// inventory) that every variable a task reads is defined for every host it targets.
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parseError, type SourcePos, TsbmError } from '../errors.js';
import { printable } from '../schema/ajv.js';
import { suggestion } from '../schema/did-you-mean.js';
import { loadYamlFile } from '../schema/yaml-source.js';
import { checkTemplateSyntax, referencedVars, referencedVarsInCondition } from '../template/analyze.js';
import type { Vars } from '../types.js';
import { type FoundString, nodeStrings, templateStrings, valueAt } from './check-walk.js';
import { sourceOf } from './context.js';
import { displayPath } from './roles.js';
import type { LoadOptions } from './context.js';
import { loadPlaybook, loadTasksFile } from './load.js';
import type { Block, Handler, Play, Task, TaskNode } from './model.js';
import { isTemplated } from './values.js';

/** What validate needs from an inventory (the CLI builds it from src/inventory). */
export interface ValidateInventory {
  /** Host names a pattern selects. */
  select(pattern: string): string[];
  /** Names of every variable the inventory defines for a host (group/host vars, magic vars). */
  varNames(host: string): Set<string>;
}

export interface ValidateOptions extends Omit<LoadOptions, 'onError'> {
  inventory?: ValidateInventory;
  /** Checks a host pattern's syntax (src/inventory/patterns.ts validatePattern). */
  checkPattern?: (pattern: string) => TsbmError | undefined;
  extraVars?: Vars;
}

/** Variables the executor itself provides to every task. */
export const RUNTIME_VARS = [
  'inventory_hostname',
  'inventory_hostname_short',
  'group_names',
  'groups',
  'hostvars',
  'playbook_dir',
  'inventory_dir',
  'tsbm_check_mode',
  'ansible_check_mode',
  'ansible_play_hosts',
  'ansible_play_batch',
  'play_hosts',
  'omit',
];

interface Scope {
  names: Set<string>;
}

class Checker {
  readonly errors: TsbmError[] = [];
  private readonly seen = new Set<string>();
  private readonly includeChain: string[] = [];

  constructor(
    private readonly opts: ValidateOptions,
    private readonly playbookDir: string,
  ) {}

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
    const hosts = templated ? [] : (this.opts.inventory?.select(play.hosts) ?? []);
    const scope: Scope = {
      names: new Set([
        ...Object.keys(play.vars),
        ...play.varsFiles.flatMap((v) => Object.keys(v)),
        ...Object.keys(this.opts.extraVars ?? {}),
        ...RUNTIME_VARS,
        ...(play.gatherFacts ? ['facts', 'ansible_facts'] : []),
      ]),
    };
    const walk = (nodes: TaskNode[]) => {
      for (const n of nodes) this.node(n, scope, hosts);
    };
    walk(play.preTasks);
    walk(play.roleTasks);
    walk(play.tasks);
    walk(play.postTasks);
    for (const h of play.handlers) this.node(h, scope, hosts);
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

  private node(n: TaskNode | Handler, outer: Scope, hosts: string[]): void {
    const scope: Scope = { names: new Set([...outer.names, ...Object.keys(n.vars)]) };
    if (n.role) {
      for (const k of [
        ...Object.keys(n.role.defaults),
        ...Object.keys(n.role.vars),
        'role_name',
        'role_path',
      ])
        scope.names.add(k);
    }
    if (n.kind === 'task') this.addTaskScope(n, scope);
    this.strings(n, nodeStrings(n), scope, hosts);
    if (n.kind === 'task') this.fileRefs(n);
    if (n.kind === 'block') {
      const b = n as Block;
      for (const c of [...b.block, ...b.rescue, ...b.always]) this.node(c, scope, hosts);
    }
    if (n.kind === 'include_tasks') this.include(n.file, n.pos, n, scope, hosts);
    // What a task registers or sets is visible to every later task of the play.
    if (n.kind === 'task') {
      if (n.register) outer.names.add(n.register);
      // Any module may return `facts`/`ansible_facts`; the executor makes them host variables.
      outer.names.add('facts');
      outer.names.add('ansible_facts');
      if (n.module === 'set_fact')
        for (const k of Object.keys(n.args)) if (k !== 'cacheable') outer.names.add(k);
    } else if (n.kind === 'block') {
      for (const k of scope.names) if (!(k in n.vars)) outer.names.add(k);
    }
  }

  private addTaskScope(t: Task, scope: Scope): void {
    // A task's own register is readable in its until/failed_when/changed_when.
    if (t.register) scope.names.add(t.register);
    if (t.loop !== undefined) {
      scope.names.add(t.loopControl?.loopVar ?? 'item');
      if (t.loopControl?.indexVar) scope.names.add(t.loopControl.indexVar);
      scope.names.add('ansible_loop');
    }
  }

  private include(file: string, from: SourcePos, node: TaskNode, scope: Scope, hosts: string[]): void {
    if (isTemplated(file)) return;
    const abs = resolve(file);
    if (this.includeChain.includes(abs)) return; // a recursive include is legal at run time (with a condition)
    this.includeChain.push(abs);
    try {
      const tasks = loadTasksFile(displayPath(file), from, this.playbookDir, node.role, {
        ...this.opts,
        onError: (e) => this.add(e),
      });
      for (const t of tasks) this.node(t, scope, hosts);
    } catch (e) {
      if (e instanceof TsbmError) this.add(e);
      else throw e;
    } finally {
      this.includeChain.pop();
    }
  }

  private strings(n: TaskNode, found: FoundString[], scope: Scope, hosts: string[]): void {
    const what = n.name
      ? `task "${printable(n.name)}"`
      : n.kind === 'task'
        ? `task ${n.module}`
        : 'this block';
    for (const f of found) {
      const pos = f.src.pos(f.path);
      const err = checkTemplateSyntax(f.value, pos, f.condition);
      if (err) {
        this.add(err);
        continue;
      }
      if (!this.opts.inventory) continue;
      const used = f.condition ? referencedVarsInCondition(f.value) : referencedVars(f.value);
      for (const v of used) {
        if (scope.names.has(v)) continue;
        const missing = hosts.filter((h) => !this.opts.inventory!.varNames(h).has(v));
        if (missing.length === 0) continue;
        const shown =
          missing.length > 3
            ? `${missing.slice(0, 3).join(', ')} and ${missing.length - 3} more`
            : missing.join(', ');
        this.add(
          new TsbmError(
            'parse',
            `undefined variable "${v}" in ${what} for host${missing.length > 1 ? 's' : ''} ${shown}`,
            {
              pos,
              hint: `define "${v}" in the inventory, the play's vars or with -e, or use "default ${v} ..."`,
            },
          ),
        );
      }
    }
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
    const checker = new Checker(opts, pb.dir);
    for (const e of loadErrors) checker.add(e);
    for (const play of pb.plays) checker.play(play);
    // Report in reading order (load errors and later checks interleave by position).
    const key = (e: TsbmError) => [e.pos?.file ?? '', e.pos?.line ?? 0, e.pos?.col ?? 0] as const;
    const sorted = [...checker.errors].sort((a, b) => {
      const [fa, la, ca] = key(a);
      const [fb, lb, cb] = key(b);
      return fa === fb ? la - lb || ca - cb : fa < fb ? -1 : 1;
    });
    all.push(...sorted);
  }
  return all;
}
