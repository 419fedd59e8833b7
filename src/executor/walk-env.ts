// Binds the host walker to one host of a play: tag and --start-at-task selection, run-time
// include_tasks loading, and the end hooks.
import { isAbsolute, resolve } from 'node:path';
import { TsbmError } from '../errors.js';
import type { IncludeTasks, Task, TaskKeywords, TaskNode } from '../playbook/model.js';
import { evalCondition, renderText } from '../template/index.js';
import type { TemplateContext } from '../template/types.js';
import type { Step, WalkEnv } from './host-walker.js';
import { effectiveKeywords } from './keywords.js';
import { lazyVars } from './lazy-vars.js';
import type { PlayRuntime } from './play-runtime.js';
import { shouldRun } from './tags.js';
import { taskVars } from './task-vars.js';
import { roleOf } from './vars.js';

/**
 * `include_role` with a templated name, rendered for this host: the role is loaded once per
 * play and name, and its handlers join the play's (as Ansible adds an included role's).
 */
function includeRole(pr: PlayRuntime, node: IncludeTasks, name: string): { nodes: TaskNode[]; file: string } {
  const file = `role ${name}`;
  const key = `${node.id}\0${file}`;
  let nodes = pr.includes.get(key);
  if (!nodes) {
    if (!pr.deps.loadRole) throw new TsbmError('runtime', 'include_role with a templated name cannot be loaded here', { pos: node.pos });
    const { name: _, ...spec } = node.includeRole!;
    const loaded = pr.deps.loadRole(name, spec, node.pos);
    nodes = loaded.nodes;
    pr.includes.set(key, nodes);
    pr.play.handlers.push(...loaded.handlers);
  }
  return { nodes, file };
}

/** The play's force_handlers, else --force-handlers (or the config's force_handlers). */
export function forceHandlers(pr: PlayRuntime): boolean {
  return pr.play.forceHandlers ?? pr.forceHandlers;
}

export function walkEnv(pr: PlayRuntime, host: string): WalkEnv {
  const hs = pr.state.host(host);
  return {
    play: pr.play,
    selected(task: Task, chain: readonly TaskKeywords[]): boolean {
      if (pr.skipTasks.has(task)) return false;
      return shouldRun(effectiveKeywords(pr.play, chain, task).tags, pr);
    },
    include(node: IncludeTasks, chain: readonly TaskKeywords[]) {
      try {
        const raw = taskVars(pr, host, chain, node);
        const where: Omit<TemplateContext, 'vars'> = {
          pos: node.pos,
          task: node.name ?? 'include_tasks',
          host,
          baseDir: node.baseDir,
        };
        const vars = lazyVars(raw, where);
        const whens = [...chain.flatMap((c) => c.when), ...node.when];
        if (!whens.every((w) => evalCondition(w.expr, { ...where, vars, pos: w.pos }))) return { skipped: true };
        if (node.includeRole) return includeRole(pr, node, renderText(node.includeRole.name, { ...where, vars }).trim());
        const rel = renderText(node.file, { ...where, vars });
        const file = isAbsolute(rel) ? rel : resolve(node.baseDir, rel);
        // Hosts including the same file share one load (the nodes are never mutated).
        const key = `${node.id}\0${file}`;
        let nodes = pr.includes.get(key);
        if (!nodes) {
          nodes = pr.deps.loadTaskFile(file, node.pos, roleOf(chain, node));
          pr.includes.set(key, nodes);
        }
        return { nodes, file };
      } catch (e) {
        const msg = e instanceof TsbmError ? e.oneLine() : e instanceof Error ? e.message : String(e);
        return { error: `${node.includeRole ? 'include_role' : 'include_tasks'}: ${msg}` };
      }
    },
    ended: () => hs.ended || pr.endPlay || pr.state.interrupted,
    forceHandlers: forceHandlers(pr),
    cut: (next?: TaskNode) => {
      // Only the run's own stop leaves a host unfinished; end_host and end_play are its end.
      if (!pr.state.interrupted || hs.ended || pr.endPlay) return;
      const name = next ? (next.name ?? (next.kind === 'task' ? next.module : next.kind)) : undefined;
      pr.state.leave(host, pr.state.fatal ? `the run stopped: ${pr.state.fatal.message}` : name ? `interrupted before "${name}"` : 'interrupted before the end of the play');
    },
  };
}

/** Why a host with `step` still ahead of it is unfinished: "interrupted before "Install the image"". */
export function stepWhy(pr: PlayRuntime, step: Step): string {
  if (pr.state.fatal) return `the run stopped: ${pr.state.fatal.message}`;
  return step.kind === 'task' ? `interrupted before "${pr.names.get(step.key) ?? step.task.name ?? step.task.module}"` : 'interrupted before its handlers ran';
}
