// The reference for bench/deploy-vs-hand: one node deployed by hand, the way an operator scripts
// it with curl and ssh: the same steps as deploy-bootc.yml in the same order, and nothing else
// (no preflight, no read-backs, no identity check, no memory check, no ramdisk contract). It
// waits only where a step cannot go on without it: for PowerState Off/On after a power change
// (curl every 0.25 s) and for the ramdisk's SSH (every 0.25 s). SSH runs through one
// ControlMaster connection per boot, as a careful operator would set it up.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quoteArgv } from '../../src/util/shell-quote.js';
import { bootcInstallArgv } from '../../src/modules/bootc/bootc-argv.js';

export interface HandNode {
  name: string;
  bmcUrl: string;
  bmcUser: string;
  bmcPassword: string;
  caFile: string;
  systemPath: string;
  /** The System's #ComputerSystem.Reset target. */
  resetTarget: string;
  /** The virtual CD slot (PATCHed: the DMTF tree has no media actions). */
  cdSlot: string;
  sshHost: string;
  device: string;
  diskMiB: number;
}

export interface HandJob {
  dir: string;
  privateKeyFile: string;
  imageRef: string;
  /** {"auths": ...} for the registry, written to a 0600 file on the ramdisk and removed. */
  authJson: string;
  isoUrl: string;
  /** meta_data.json of the node's config drive. */
  metaData: Record<string, unknown>;
  userData: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs a command without blocking the event loop (the fake BMCs live in this process). */
function run(argv: string[], input?: string | Buffer): Promise<{ rc: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    p.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    p.on('close', (rc) => resolve({ rc: rc ?? 128, stdout, stderr }));
    p.stdin.on('error', () => {}); // a command that exits before reading its input
    p.stdin.end(input ?? '');
  });
}

async function must(argv: string[], input?: string | Buffer): Promise<string> {
  const r = await run(argv, input);
  if (r.rc !== 0) throw new Error(`hand deploy: ${argv.slice(0, 6).join(' ')} failed (rc ${r.rc}): ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

function curl(n: HandNode, method: string, path: string, body?: unknown): string[] {
  return [
    'curl', '-sS', '--fail-with-body', '--cacert', n.caFile, '-u', `${n.bmcUser}:${n.bmcPassword}`, '-X', method,
    ...(body === undefined ? [] : ['-H', 'Content-Type: application/json', '-d', JSON.stringify(body)]),
    `${n.bmcUrl}${path}`,
  ];
}

async function powerState(n: HandNode): Promise<string> {
  return String((JSON.parse(await must(curl(n, 'GET', n.systemPath))) as { PowerState?: string }).PowerState);
}

async function until(what: () => Promise<boolean>): Promise<void> {
  for (;;) {
    if (await what()) return;
    await sleep(250);
  }
}

function ssh(job: HandJob, n: HandNode, command: string): string[] {
  return [
    'ssh', '-i', job.privateKeyFile, '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
    '-o', 'LogLevel=ERROR', '-o', 'ConnectTimeout=2', '-o', 'ServerAliveInterval=5', '-o', 'ServerAliveCountMax=3', '-o', 'ControlMaster=auto', '-o', `ControlPath=${join(job.dir, `cm-${n.name}`)}`,
    '-o', 'ControlPersist=120', `root@${n.sshHost}`, command,
  ];
}

/** Ends the node's ControlMaster connection (it would outlive the bench otherwise). */
export function endSsh(job: HandJob, n: HandNode): Promise<unknown> {
  return run(['ssh', '-o', `ControlPath=${join(job.dir, `cm-${n.name}`)}`, '-O', 'exit', `root@${n.sshHost}`]);
}

/** The config drive as an operator makes it: the OpenStack layout, genisoimage, label config-2. */
async function configDriveIso(job: HandJob, n: HandNode): Promise<string> {
  const root = join(job.dir, `cd-${n.name}`);
  for (const v of ['openstack/2012-08-10', 'openstack/latest']) {
    mkdirSync(join(root, v), { recursive: true });
    writeFileSync(join(root, v, 'meta_data.json'), JSON.stringify(job.metaData));
    writeFileSync(join(root, v, 'user_data'), job.userData);
  }
  const iso = join(job.dir, `cd-${n.name}.iso`);
  await must(['genisoimage', '-quiet', '-R', '-J', '-V', 'config-2', '-o', iso, root]);
  return iso;
}

/** Deploys one node by hand; resolves to its own wall time in ms. `steps` gets each step's time. */
export async function handDeploy(job: HandJob, n: HandNode, steps?: Array<[string, number]>): Promise<number> {
  const t0 = Date.now();
  let last = t0;
  const step = (name: string) => {
    const now = Date.now();
    steps?.push([name, now - last]);
    last = now;
  };
  // power off (when on), media in, boot once from CD, power on
  if ((await powerState(n)) !== 'Off') {
    await must(curl(n, 'POST', n.resetTarget, { ResetType: 'ForceOff' }));
    await until(async () => (await powerState(n)) === 'Off');
  }
  step('power off');
  await must(curl(n, 'PATCH', n.cdSlot, { Image: job.isoUrl, Inserted: true, WriteProtected: true }));
  await must(curl(n, 'PATCH', n.systemPath, { Boot: { BootSourceOverrideTarget: 'Cd', BootSourceOverrideEnabled: 'Once', BootSourceOverrideMode: 'UEFI' } }));
  step('media, boot once from CD');
  await must(curl(n, 'POST', n.resetTarget, { ResetType: 'On' }));
  // the ramdisk answers
  await until(async () => (await run(ssh(job, n, 'true'))).rc === 0);
  step('power on, ramdisk answers');
  // root disk, pull (secret in a 0600 file, removed), install, config drive, flush
  await must(ssh(job, n, quoteArgv(['lsblk', '-J', '-b', '-o', 'NAME,SIZE,TYPE', n.device])));
  step('root disk');
  await must(
    // (the lab's ramdisks share this machine's /run: one file name per node)
    ssh(job, n, `mkdir -p -m 0700 /run/hand && umask 077 && cat > /run/hand/${n.name}.json && podman pull -q --tls-verify=false --authfile /run/hand/${n.name}.json ${quoteArgv([job.imageRef])}; rc=$?; rm -f /run/hand/${n.name}.json; exit $rc`),
    job.authJson,
  );
  step('pull');
  await must(ssh(job, n, quoteArgv(bootcInstallArgv({ ref: job.imageRef, device: n.device, diskMiB: n.diskMiB, selinux: false, tpm2Luks: false, extraArgs: [] }))));
  step('install');
  const iso = await configDriveIso(job, n);
  const onRamdisk = `/tmp/hand-config-drive-${n.name}.iso`;
  await must(ssh(job, n, `cat > ${onRamdisk}`), readFileSync(iso));
  await must(
    ssh(
      job,
      n,
      [
        `echo 'size=64MiB, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=config-2' | sfdisk -q --append --no-reread --no-tell-kernel ${n.device}`,
        `start=$(partx -g -o START -n 3 ${n.device})`,
        `dd if=${onRamdisk} of=${n.device} bs=512 seek=$start conv=notrunc,fsync status=none`,
        `rm -f ${onRamdisk}`,
        'sync',
      ].join(' && '),
    ),
  );
  step('config drive, flush');
  // media out, boot from disk from now on, power cycle, On
  await must(curl(n, 'PATCH', n.cdSlot, { Image: null, Inserted: false }));
  await must(curl(n, 'PATCH', n.systemPath, { Boot: { BootSourceOverrideTarget: 'Hdd', BootSourceOverrideEnabled: 'Continuous' } }));
  step('eject, boot from disk');
  await must(curl(n, 'POST', n.resetTarget, { ResetType: 'ForceRestart' }));
  await until(async () => (await powerState(n)) === 'On');
  step('power cycle');
  return Date.now() - t0;
}
