// Network namespaces for e2e hosts: a veth pair with 10.231.N.1 (machine side) and
// 10.231.N.2 (inside, with a known MAC), N claimed atomically so parallel test files never
// share a subnet. Only addresses in namespaces a test made are used. Always torn down.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { sh } from './run.js';

const CLAIMS = '/run/tsbm-lab/subnets';

export interface Netns {
  name: string;
  /** The veth end on the machine side. */
  hostIf: string;
  hostIp: string;
  /** Address of the namespace's eth0. */
  nsIp: string;
  mac: string;
  subnet: number;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Claims a free N in 10.231.N.0/24 (mkdir is atomic); stale claims of dead processes are taken over. */
function claimSubnet(): number {
  mkdirSync(CLAIMS, { recursive: true });
  for (let n = 1; n < 250; n++) {
    const dir = `${CLAIMS}/${n}`;
    try {
      mkdirSync(dir);
    } catch {
      const owner = Number(existsSync(`${dir}/pid`) ? readFileSync(`${dir}/pid`, 'utf8') : 0);
      if (owner && alive(owner)) continue;
      if (!owner) continue; // being claimed right now
      // A crashed run left this subnet: remove its namespace and veth before reusing it.
      const stale = existsSync(`${dir}/links`) ? readFileSync(`${dir}/links`, 'utf8').split(' ') : [];
      if (stale[0]) sh(['ip', 'netns', 'del', stale[0]], { allowFail: true });
      if (stale[1]) sh(['ip', 'link', 'del', stale[1]], { allowFail: true });
      rmSync(dir, { recursive: true, force: true });
      try {
        mkdirSync(dir);
      } catch {
        continue;
      }
    }
    writeFileSync(`${dir}/pid`, String(process.pid));
    return n;
  }
  throw new Error('lab: no free 10.231.N.0/24 subnet');
}

const created: Netns[] = [];

export function createNetns(tag: string, macSuffix = 1): Netns {
  const subnet = claimSubnet();
  const name = `tsbm-${tag}-${process.pid}`.slice(0, 40);
  const hostIf = `tv${subnet}p${process.pid % 100000}`.slice(0, 15);
  const mac = `52:54:00:e7:${subnet.toString(16).padStart(2, '0')}:${(macSuffix & 0xff).toString(16).padStart(2, '0')}`;
  const ns: Netns = { name, hostIf, hostIp: `10.231.${subnet}.1`, nsIp: `10.231.${subnet}.2`, mac, subnet };
  created.push(ns);
  writeFileSync(`${CLAIMS}/${subnet}/links`, `${name} ${hostIf}`);
  // Leftovers of a crashed run with the same pid would make `ip netns add` fail.
  sh(['ip', 'netns', 'del', name], { allowFail: true });
  sh(['ip', 'link', 'del', hostIf], { allowFail: true });
  sh(['ip', 'netns', 'add', name]);
  sh(['ip', 'link', 'add', hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name]);
  sh(['ip', '-n', name, 'link', 'set', 'eth0', 'address', mac]);
  sh(['ip', 'addr', 'add', `${ns.hostIp}/24`, 'dev', hostIf]);
  sh(['ip', 'link', 'set', hostIf, 'up']);
  sh(['ip', '-n', name, 'addr', 'add', `${ns.nsIp}/24`, 'dev', 'eth0']);
  sh(['ip', '-n', name, 'link', 'set', 'eth0', 'up']);
  sh(['ip', '-n', name, 'link', 'set', 'lo', 'up']);
  // Lets the namespace reach the machine's other test addresses (the registry's veth).
  sh(['ip', '-n', name, 'route', 'add', 'default', 'via', ns.hostIp]);
  return ns;
}

function destroyNetns(ns: Netns): void {
  sh(['ip', 'netns', 'del', ns.name], { allowFail: true });
  sh(['ip', 'link', 'del', ns.hostIf], { allowFail: true });
  rmSync(`${CLAIMS}/${ns.subnet}`, { recursive: true, force: true });
  const i = created.indexOf(ns);
  if (i >= 0) created.splice(i, 1);
}

export function destroyAllNetns(): void {
  for (const ns of [...created]) destroyNetns(ns);
}

/** argv prefix that runs a command with only the namespace's network (TESTLAB.md: not `ip netns exec`). */
export const inNetns = (ns: Netns, argv: string[]): string[] => [
  'nsenter',
  `--net=/run/netns/${ns.name}`,
  ...argv,
];
