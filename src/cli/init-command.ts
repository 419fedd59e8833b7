// The work behind `tsbm init`: what the package ships, copied file by file.
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { optionsError } from '../errors.js';

/** The package's root, from dist/cli (installed) or src/cli (tests). */
const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SHIPPED = ['playbooks', 'inventory-examples'];

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

export function initCommand(dir: string, force: boolean): string {
  const target = resolve(dir);
  if (existsSync(target) && !statSync(target).isDirectory()) throw optionsError(`${dir} is not a directory`, 'give a directory');
  const copies: Array<{ from: string; to: string }> = [];
  for (const top of SHIPPED) {
    const src = join(PACKAGE_ROOT, top);
    for (const f of filesUnder(src)) copies.push({ from: f, to: join(target, relative(PACKAGE_ROOT, f)) });
  }
  if (copies.some((c) => c.from === c.to)) throw optionsError(`${dir} is tsbm's own directory: the playbooks are already there`);
  const clashes = copies.filter((c) => existsSync(c.to));
  if (clashes.length && !force) {
    const names = clashes.slice(0, 3).map((c) => relative(process.cwd(), c.to) || c.to);
    throw optionsError(`${clashes.length} file(s) exist already: ${names.join(', ')}${clashes.length > 3 ? ', ...' : ''}`, 'add --force to replace them, or choose another directory');
  }
  for (const c of copies) {
    mkdirSync(dirname(c.to), { recursive: true });
    copyFileSync(c.from, c.to);
  }
  const where = relative(process.cwd(), target) || '.';
  const p = (s: string) => (where === '.' ? s : join(where, s));
  return [
    `copied ${copies.length} files into ${target}: ${SHIPPED.map((s) => `${s}/`).join(' and ')}`,
    'next:',
    `  tsbm run ${p('playbooks/deploy-bootc.yml')} -i ${p('inventory-examples/sim.yml')}    a simulated deploy, no hardware`,
    `  edit ${p('inventory-examples/lab.yml')} for your nodes, or: tsbm inventory import --from-ironic nodes.json -o inventory.yml`,
    `(the shipped copies stay in ${PACKAGE_ROOT})`,
    '',
  ].join('\n');
}
