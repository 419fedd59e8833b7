// bench/runner-overhead: the same playbook (M `command: /bin/true` tasks, no facts) on N real
// OpenSSH hosts on loopback, run by tsbm, by ansible-playbook (pipelining + ControlPersist,
// forks = N), and by a plain OpenSSH ControlMaster loop (the floor). Prints wall-time ratios of
// this one run and tsbm's peak RSS. Usage: node dist-bench/bench/runner-overhead.js [N] [M]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { measure } from './lib/measure.js';
import { startSshdHosts } from './lib/sshd-hosts.js';

const N = Number(process.argv[2] ?? 20);
const M = Number(process.argv[3] ?? 10);
const root = resolve(import.meta.dirname, '..', '..');

if (process.getuid?.() !== 0) {
  console.log('runner-overhead: skipped (needs root to start sshd hosts)');
  process.exit(0);
}

const hosts = await startSshdHosts(N);
try {
  const d = hosts.dir;
  const names = hosts.ports.map((_, i) => `h${String(i + 1).padStart(2, '0')}`);
  const common = `ansible_host: 127.0.0.1\n      ansible_user: ${hosts.user}\n      ansible_ssh_private_key_file: ${hosts.clientKey}`;
  const inv = ['all:', '  vars:', `    ssh_known_hosts_file: ${hosts.knownHosts}`, '  hosts:'];
  for (const [i, p] of hosts.ports.entries()) inv.push(`    ${names[i]}:`, `      ansible_port: ${p}`, `      ${common}`);
  writeFileSync(join(d, 'inventory.yml'), inv.join('\n') + '\n');
  const tasks = Array.from({ length: M }, (_, i) => `    - name: true ${i + 1}\n      command: /bin/true`);
  writeFileSync(join(d, 'play.yml'), `- hosts: all\n  gather_facts: false\n  tasks:\n${tasks.join('\n')}\n`);

  // ansible-playbook with its fastest SSH settings.
  mkdirSync(join(d, 'cp'), { recursive: true });
  writeFileSync(
    join(d, 'ansible.cfg'),
    [
      '[defaults]',
      `forks = ${N}`,
      'host_key_checking = False',
      'interpreter_python = /usr/bin/python3',
      'retry_files_enabled = False',
      '[ssh_connection]',
      'pipelining = True',
      `ssh_args = -o ControlMaster=auto -o ControlPersist=60s -o UserKnownHostsFile=${hosts.knownHosts}`,
      `control_path = ${join(d, 'cp')}/%%h-%%p`,
      '',
    ].join('\n'),
  );
  const ansible = measure(['ansible-playbook', '-i', join(d, 'inventory.yml'), join(d, 'play.yml')], {
    env: { ...process.env, ANSIBLE_CONFIG: join(d, 'ansible.cfg') },
  });

  // The floor: one ControlMaster per host, then M rounds of N parallel `ssh /bin/true`.
  const sshOpts = `-o BatchMode=yes -o UserKnownHostsFile=${hosts.knownHosts} -i ${hosts.clientKey} -l ${hosts.user}`;
  const floorScript = [
    'set -e',
    `ports="${hosts.ports.join(' ')}"`,
    `for p in $ports; do ssh ${sshOpts} -p $p -o ControlMaster=yes -o ControlPath=${d}/fl-%p -o ControlPersist=60 -fN 127.0.0.1 & done; wait`,
    `for i in $(seq ${M}); do for p in $ports; do ssh ${sshOpts} -p $p -o ControlPath=${d}/fl-%p 127.0.0.1 /bin/true & done; wait; done`,
    `for p in $ports; do ssh -o ControlPath=${d}/fl-%p -O exit -p $p 127.0.0.1 2>/dev/null || true; done`,
  ].join('\n');
  const floor = measure(['bash', '-c', floorScript]);

  const tsbm = measure(
    ['node', join(root, 'bin/tsbm.js'), 'run', join(d, 'play.yml'), '-i', join(d, 'inventory.yml'), '--output', 'plain', '-f', String(N)],
  );

  for (const [name, m] of [['tsbm', tsbm], ['ansible-playbook', ansible], ['openssh-floor', floor]] as const) {
    if (m.status !== 0) {
      console.log(`${name} failed (exit ${m.status}):\n${m.output.slice(-2000)}`);
      process.exitCode = 1;
    }
  }
  const f = (x: number) => x.toFixed(2);
  console.log(`runner-overhead N=${N} hosts, M=${M} tasks (one run each, same machine, same hosts)`);
  console.log(`  tsbm              ${f(tsbm.wallS)} s   peak RSS ${f(tsbm.peakRssMiB)} MiB`);
  console.log(`  ansible-playbook  ${f(ansible.wallS)} s   peak RSS ${f(ansible.peakRssMiB)} MiB`);
  console.log(`  openssh floor     ${f(floor.wallS)} s`);
  console.log(`  ansible / tsbm    ${f(ansible.wallS / tsbm.wallS)}x  (target >= 20x)`);
  console.log(`  tsbm / floor      ${f(tsbm.wallS / floor.wallS)}x  (target <= 1.5x)`);
} finally {
  hosts.close();
}
