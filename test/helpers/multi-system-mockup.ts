// A vendor tree whose BMC manages several Systems (as a blade enclosure's or a multi-node
// chassis's does), derived from a shipped single-System tree: its System's subtree copied under
// new Ids, listed in the Systems collection and in the Chassis' and Manager's links.
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { MOCKUPS_DIR } from '../../packages/lab/src/lab/package-paths.js';

type Json = Record<string, unknown>;
const link = (path: string) => ({ '@odata.id': path });
const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as Json;
const write = (f: string, body: unknown) => writeFileSync(f, `${JSON.stringify(body, null, 4)}\n`);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

/** Writes the tree to `dest` with `count` Systems (the original first); returns their paths. */
export function multiSystemMockup(shipped: string, dest: string, count: number): string[] {
  const src = join(MOCKUPS_DIR, shipped);
  cpSync(src, dest, { recursive: true });
  const systemsFile = join(dest, 'Systems', 'index.json');
  const systems = read(systemsFile);
  const first = (systems.Members as { '@odata.id': string }[])[0]!['@odata.id'].replace(/\/+$/, '');
  const id = first.split('/').pop()!;
  const paths = [first];
  for (let k = 2; k <= count; k++) {
    const newId = `${id}-${k}`;
    const newPath = first.replace(new RegExp(`${id}$`), newId);
    const from = join(src, 'Systems', id);
    for (const f of files(from)) {
      // Every link inside the System's subtree names its own path: point them at the copy.
      const text = readFileSync(f, 'utf8').split(`${first}/`).join(`${newPath}/`).split(`"${first}"`).join(`"${newPath}"`);
      const out = join(dest, 'Systems', newId, relative(from, f));
      mkdirSync(join(out, '..'), { recursive: true });
      writeFileSync(out, text);
    }
    const body = read(join(dest, 'Systems', newId, 'index.json'));
    body.Id = newId;
    body.Name = `${String(body.Name ?? 'System')} ${k}`;
    write(join(dest, 'Systems', newId, 'index.json'), body);
    paths.push(newPath);
  }
  systems.Members = paths.map(link);
  systems['Members@odata.count'] = paths.length;
  write(systemsFile, systems);
  // The enclosure's Chassis and Manager list every System they hold and manage.
  const sys = read(join(src, 'Systems', id, 'index.json'));
  const links = sys.Links as { Chassis?: { '@odata.id': string }[]; ManagedBy?: { '@odata.id': string }[] } | undefined;
  for (const [refs, key] of [
    [links?.Chassis, 'ComputerSystems'],
    [links?.ManagedBy, 'ManagerForServers'],
  ] as const) {
    for (const r of refs ?? []) {
      const f = join(dest, r['@odata.id'].replace(/^\/redfish\/v1\/?/, ''), 'index.json');
      const body = read(f);
      body.Links = { ...((body.Links as Json | undefined) ?? {}), [key]: paths.map(link) };
      write(f, body);
    }
  }
  return paths;
}
