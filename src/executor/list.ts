// --list-hosts / --list-tasks / --list-tags / --syntax-check: Ansible-like text, no connections.
import { relative } from 'node:path';
import { addPlaybookDirVars, loadInventories } from '../inventory/load.js';
import type { Play, TaskNode } from '../playbook/model.js';
import { loadPlaybook } from '../playbook/load.js';
import { inventoryView } from './inventory-view.js';
import type { RunOptions } from './options.js';
import { inShard } from './shard.js';
import { shouldRun } from './tags.js';

export async function listPlaybook(opts: RunOptions): Promise<string> {
  const pb = loadPlaybook(opts.playbook, opts.rolesPath ? { rolesPath: opts.rolesPath } : {});
  const out: string[] = [`playbook: ${relative(process.cwd(), pb.file) || pb.file}`];
  if (opts.syntaxCheck && !opts.listHosts && !opts.listTasks && !opts.listTags) return `${out[0]}\n`;
  const inv = loadInventories(opts.inventories);
  addPlaybookDirVars(inv, pb.dir);
  const view = inventoryView(inv, pb.dir);
  out.push('');
  pb.plays.forEach((play, i) => {
    out.push(`  play #${i + 1} (${play.hosts}): ${play.name}\tTAGS: [${play.tags.join(', ')}]`);
    if (opts.listHosts) {
      let hosts = view.select(play.hosts).filter((h) => inShard(h, opts.shard));
      if (opts.limit) {
        const ok = new Set(view.select(opts.limit));
        hosts = hosts.filter((h) => ok.has(h));
      }
      out.push(`    pattern: ['${play.hosts}']`, `    hosts (${hosts.length}):`, ...hosts.map((h) => `      ${h}`));
    }
    const tasks = tasksOf(play, opts);
    if (opts.listTasks) {
      out.push('    tasks:', ...tasks.map((t) => `      ${t.name}\tTAGS: [${t.tags.join(', ')}]`));
    }
    if (opts.listTags) {
      const all = new Set(play.tags);
      for (const t of tasks) for (const g of t.tags) all.add(g);
      out.push(`      TASK TAGS: [${[...all].sort().join(', ')}]`);
    }
    out.push('');
  });
  return `${out.join('\n')}\n`;
}

function tasksOf(play: Play, opts: RunOptions): Array<{ name: string; tags: string[] }> {
  const res: Array<{ name: string; tags: string[] }> = [];
  const visit = (nodes: readonly TaskNode[], inherited: string[]) => {
    for (const n of nodes) {
      const tags = [...new Set([...inherited, ...n.tags])];
      if (n.kind === 'block') {
        visit(n.block, tags);
        visit(n.rescue, tags);
        visit(n.always, tags);
      } else if (n.kind === 'include_tasks') {
        res.push({ name: n.name ?? (n.includeRole ? `include_role: ${n.includeRole.name}` : `include_tasks: ${n.file}`), tags });
      } else if (shouldRun([...new Set([...play.tags, ...tags])], opts)) {
        res.push({ name: n.name ?? n.module, tags });
      }
    }
  };
  visit([...play.preTasks, ...play.roleTasks, ...play.tasks, ...play.postTasks], []);
  return res;
}
