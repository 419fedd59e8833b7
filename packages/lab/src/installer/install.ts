// The simulated Anaconda: given a kickstart, it does what the installer does with it, in the
// same order. Parse (a syntax error or an unknown command stops it before any script, as
// Anaconda's parser does); %pre; %include; the commands (an error for any it cannot honour);
// the disk (only the disks ignoredisk allows, cleared as clearpart says, laid out by autopart
// with the project's own GPT code); the payload (ostreecontainer: the image from the lab's
// catalogue, with the auth file %pre left; liveimg: downloaded and checked against --checksum;
// url: the tree's .treeinfo); %post; then poweroff. A failure after parsing logs its lines to
// /tmp/anaconda.log and runs %onerror, as Anaconda does. What was installed is recorded in
// <node>/root/sim/installed.json for `tsbm sim status` and tests.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { KICKSTART_COMMANDS } from 'tsbm/lib/modules/anaconda/kickstart-check.js';
import { type Kickstart, KickstartSyntaxError, parseKickstart } from 'tsbm/lib/modules/anaconda/kickstart-parse.js';
import { typeGuidFor } from '../gpt/type-codes.js';
import { randomGuid } from '../gpt/guid.js';
import { openDisk, writeTable, zapGpt, loadTable } from '../gpt/disk-file.js';
import { newTable, SECTOR } from '../gpt/table.js';
import type { SimImage } from '../lab/images.js';
import { InstallError, interpret, type SimPlan, type SimSource } from './commands.js';
import { isLoopbackUrl } from './media.js';
import { inSandbox, runScript, type ScriptEnv } from './scripts.js';

export type InstallerFault = 'ks_error' | 'installer_silent' | 'wrong_token';

export interface InstallerEnv extends Omit<ScriptEnv, 'signal'> {
  node: string;
  diskFile: string;
  registryHost: string;
  /** user:password the lab's registry accepts. */
  registryAuth: string;
  images: readonly SimImage[];
  faults: ReadonlySet<InstallerFault>;
  /** Where the kickstart came from, for the log. */
  from: string;
  /** How the installer was booted, when from a boot ISO built from kernel and ramdisk. */
  boot?: { via: 'el-torito'; stage2: string; args: string[] };
  powerOff(): void;
  reboot(): void;
}

export interface InstallRecord {
  result: 'installed' | 'failed' | 'kickstart error';
  from: string;
  boot?: InstallerEnv['boot'];
  error?: string;
  source?: SimSource & { bytes?: number; image?: string };
  disk?: { device: string; partitions: string[] };
  keys?: { user: string; key: string }[];
  rootLocked?: boolean;
  /** Whether the pull secret %pre fetched was still on the installer's tmpfs when %post ended. */
  pullSecretLeft?: boolean;
  authFileMode?: string;
  end?: SimPlan['end'];
}

const MiB = 1024 * 1024;

class Log {
  constructor(private readonly file: string) {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, '');
  }
  line(level: 'INFO' | 'ERROR' | 'DEBUG', msg: string): void {
    const t = new Date().toISOString().slice(11, 23).replace('.', ',');
    appendFileSync(this.file, `${t} ${level} anaconda: ${msg}\n`);
  }
}

function record(env: InstallerEnv, r: InstallRecord): void {
  mkdirSync(join(env.installerRoot, 'sim'), { recursive: true });
  writeFileSync(join(env.installerRoot, 'sim', 'installed.json'), `${JSON.stringify(env.boot ? { ...r, boot: env.boot } : r, null, 2)}\n`);
}

/** The token in the kickstart's callbacks, swapped for a wrong one (the wrong_token fault). */
function corruptToken(ks: string): string {
  return ks.replace(/(X-Tsbm-Token:\s*)([A-Za-z0-9_-]+)/g, (_m, h: string, t: string) => `${h}${t.split('').reverse().join('')}x`);
}

function until(signal: AbortSignal): Promise<never> {
  return new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
}

export async function runInstaller(kickstart: string, env: InstallerEnv, signal: AbortSignal): Promise<InstallRecord> {
  const log = new Log(join(env.installerRoot, 'tmp', 'anaconda.log'));
  const sEnv: ScriptEnv = { ...env, signal };
  // As Anaconda logs it: the volume by its label, not the URL the BMC mounted it from (tsbm
  // publishes that URL as a secret, so it would show as ******** in tsbm's output).
  const from = env.from.startsWith('OEMDRV volume ') ? 'the OEMDRV volume (ks.cfg)' : env.from;
  log.line('INFO', `simulated Anaconda on ${env.node}; kickstart from ${from}`);
  rmSync(env.sysimage, { recursive: true, force: true });
  mkdirSync(env.sysimage, { recursive: true });
  if (env.faults.has('installer_silent')) {
    // As an installer stuck before its kickstart (no network, a driver missing): no callback ever.
    log.line('INFO', 'waiting for the network (simulated fault installer_silent)');
    record(env, { result: 'failed', from: env.from, error: 'installer_silent: never ran the kickstart' });
    return until(signal);
  }
  const text = env.faults.has('wrong_token') ? corruptToken(kickstart) : kickstart;
  let ks: Kickstart;
  try {
    ks = parseKickstart(text);
    const unknown = ks.commands.find((c) => !KICKSTART_COMMANDS.has(c.name));
    if (unknown) throw new KickstartSyntaxError(unknown.line, `unknown command "${unknown.name}"`);
  } catch (e) {
    if (!(e instanceof KickstartSyntaxError)) throw e;
    // Anaconda stops at the parser: nothing runs, not even %onerror.
    log.line('ERROR', `kickstart error: ${e.message}`);
    const r: InstallRecord = { result: 'kickstart error', from: env.from, error: e.message };
    record(env, r);
    return r;
  }
  const scripts = (kind: string) => ks.sections.filter((s) => s.kind === kind);
  const fail = async (message: string): Promise<InstallRecord> => {
    for (const line of message.split('\n')) log.line('ERROR', line);
    let n = 0;
    for (const s of scripts('onerror')) {
      log.line('INFO', `running %onerror script (line ${s.line})`);
      await runScript(s, n++, sEnv).catch((e: unknown) => log.line('ERROR', `%onerror: ${(e as Error).message}`));
    }
    const r: InstallRecord = { result: 'failed', from: env.from, error: message };
    record(env, r);
    return r;
  };
  try {
    let n = 0;
    for (const s of scripts('pre')) {
      log.line('INFO', `running %pre script (line ${s.line})`);
      const r = await runScript(s, n++, sEnv);
      if (r.rc !== 0) {
        log.line(r.erroronfail ? 'ERROR' : 'INFO', `%pre script (line ${s.line}) exited ${r.rc}`);
        if (r.erroronfail) return await fail(`%pre script (line ${s.line}) failed with exit code ${r.rc}: ${r.output.trim().split('\n').slice(-3).join(' | ')}`);
      }
    }
    const commands = [...ks.commands];
    for (const inc of ks.includes) {
      const file = inSandbox(env.installerRoot, inc.path);
      if (!existsSync(file)) throw new InstallError(`kickstart line ${inc.line}: %include ${inc.path}: no such file (a %pre script should have written it)`);
      commands.push(...parseKickstart(readFileSync(file, 'utf8')).commands);
    }
    const plan = interpret(commands);
    log.line('INFO', `kickstart: ${commands.length} commands, source ${plan.source?.kind ?? 'none'}`);
    const disk = layOutDisk(env, plan);
    log.line('INFO', `storage: ${disk.partitions.join(', ')} on /dev/vda`);
    const source = await payload(env, plan, log, signal);
    const home = (user: string) => (user === 'root' ? '/root' : `/home/${user}`);
    for (const k of plan.keys) {
      const f = inSandbox(env.sysimage, `${home(k.user)}/.ssh/authorized_keys`);
      mkdirSync(join(f, '..'), { recursive: true, mode: 0o700 });
      appendFileSync(f, `${k.key}\n`, { mode: 0o600 });
    }
    n = 0;
    for (const s of scripts('post')) {
      log.line('INFO', `running %post script (line ${s.line})`);
      const r = await runScript(s, n++, sEnv);
      if (r.rc !== 0 && r.erroronfail) return await fail(`%post script (line ${s.line}) failed with exit code ${r.rc}: ${r.output.trim().split('\n').slice(-3).join(' | ')}`);
    }
    const authFile = [inSandbox(env.installerRoot, '/run/ostree/auth.json'), inSandbox(env.installerRoot, '/etc/ostree/auth.json')].find((f) => existsSync(f));
    const r: InstallRecord = {
      result: 'installed',
      from: env.from,
      source,
      disk: { device: '/dev/vda', partitions: disk.partitions },
      keys: plan.keys,
      rootLocked: plan.rootLocked,
      pullSecretLeft: authFile !== undefined,
      ...(source.authFileMode ? { authFileMode: source.authFileMode } : {}),
      end: plan.end,
    };
    delete (r.source as { authFileMode?: string }).authFileMode;
    record(env, r);
    log.line('INFO', `installation complete; ${plan.end === 'none' ? 'waiting at the final screen' : plan.end}`);
    if (plan.end === 'poweroff') env.powerOff();
    else if (plan.end === 'reboot') env.reboot();
    return r;
  } catch (e) {
    if (signal.aborted) throw e;
    if (e instanceof InstallError || e instanceof KickstartSyntaxError) return fail(e.message);
    return fail(`the simulated installer failed: ${(e as Error).message}`);
  }
}

/** ignoredisk / clearpart / autopart on the node's one disk, vda, with the lab's GPT code. */
function layOutDisk(env: InstallerEnv, plan: SimPlan): { partitions: string[] } {
  if (plan.onlyUse && !plan.onlyUse.includes('vda')) throw new InstallError(`storage: ignoredisk --only-use=${plan.onlyUse.join(',')} leaves no disk (this node has vda only)`);
  if (!plan.layout) throw new InstallError('storage: no partitioning given (the simulated installer honours autopart)');
  const { fd, sectors } = openDisk(env.diskFile, true);
  try {
    const loaded = loadTable(fd, sectors);
    const used = loaded.source !== 'none' && loaded.table.entries.some((e) => e !== undefined);
    const clears = plan.clear && (plan.clear.all || plan.clear.drives?.includes('vda')) && (!plan.clear.drives || plan.clear.drives.includes('vda'));
    if (used && !clears) throw new InstallError('storage: /dev/vda has partitions and nothing clears them (clearpart --all --drives=vda)');
    if (used) zapGpt(fd, loaded.table, true);
    const t = newTable(sectors);
    const parts: [string, string, number][] = [
      ['ef00', 'EFI System Partition', 600 * MiB],
      ['8300', 'boot', 1024 * MiB],
    ];
    if (plan.layout.swap) parts.push(['8200', 'swap', 512 * MiB]);
    let next = 2048;
    parts.forEach(([code, name, bytes], i) => {
      const count = bytes / SECTOR;
      t.entries[i] = { typeGuid: typeGuidFor(code)!, uniqueGuid: randomGuid(), firstLba: next, lastLba: next + count - 1, attributes: 0n, name };
      next += count;
    });
    const lastUsable = t.lastUsable - ((t.lastUsable + 1) % 2048);
    if (lastUsable - next < 1024 * 1024 * 1024 / SECTOR) throw new InstallError(`storage: /dev/vda (${Math.round((sectors * SECTOR) / MiB)} MiB) is too small for ${plan.layout.type} autopart`);
    t.entries[parts.length] = { typeGuid: typeGuidFor(plan.layout.type === 'lvm' || plan.layout.type === 'thinp' ? '8e00' : '8300')!, uniqueGuid: randomGuid(), firstLba: next, lastLba: lastUsable, attributes: 0n, name: 'root' };
    writeTable(fd, t);
    return { partitions: t.entries.filter((e) => e !== undefined).map((e) => `${e.name} ${Math.round(((e.lastLba - e.firstLba + 1) * SECTOR) / MiB)}M`) };
  } finally {
    closeSync(fd);
  }
}

/** The install source, fetched and checked as Anaconda would, or an InstallError saying why not. */
async function payload(env: InstallerEnv, plan: SimPlan, log: Log, signal: AbortSignal): Promise<SimSource & { bytes?: number; image?: string; authFileMode?: string }> {
  const src = plan.source;
  if (!src) throw new InstallError('no installation source (ostreecontainer, liveimg or url)');
  if (env.faults.has('ks_error')) throw new InstallError(`payload: ${src.kind} failed (simulated fault ks_error): the source could not be installed`);
  if (src.kind === 'ostreecontainer') {
    if (src.transport !== 'registry') throw new InstallError(`ostreecontainer --transport=${src.transport}: the simulated installer pulls from registries only`);
    const registry = src.url.split('/')[0] ?? '';
    if (registry !== env.registryHost) throw new InstallError(`ostreecontainer: cannot reach registry ${registry} (the lab serves ${env.registryHost})`);
    const authFile = [inSandbox(env.installerRoot, '/run/ostree/auth.json'), inSandbox(env.installerRoot, '/etc/ostree/auth.json')].find((f) => existsSync(f));
    if (!authFile) throw new InstallError(`ostreecontainer: pulling ${src.url}: unauthorized: authentication required (no /run/ostree/auth.json or /etc/ostree/auth.json)`);
    let auth: string | undefined;
    try {
      const doc = JSON.parse(readFileSync(authFile, 'utf8')) as { auths?: Record<string, { auth?: string }> };
      const b64 = doc.auths?.[registry]?.auth;
      auth = b64 ? Buffer.from(b64, 'base64').toString('utf8') : undefined;
    } catch {
      throw new InstallError(`ostreecontainer: ${authFile.slice(env.installerRoot.length)} is not an auth file`);
    }
    if (auth !== env.registryAuth) throw new InstallError(`ostreecontainer: pulling ${src.url}: unauthorized: the credentials for ${registry} are refused`);
    const image = env.images.find((i) => i.ref === src.url);
    if (!image) throw new InstallError(`ostreecontainer: pulling ${src.url}: manifest unknown`);
    if (!image.bootc) throw new InstallError(`ostreecontainer: ${src.url} is not a bootable container image (no ostree commit in it)`);
    log.line('INFO', `ostreecontainer: deployed ${src.url} (${image.sizeMiB} MiB)`);
    return { ...src, image: image.ref, authFileMode: (statSync(authFile).mode & 0o777).toString(8).padStart(4, '0') };
  }
  const url = src.kind === 'url' ? `${src.url.replace(/\/?$/, '/')}.treeinfo` : src.url;
  if (!isLoopbackUrl(url)) throw new InstallError(`${src.kind}: cannot reach ${url} (the lab reaches loopback only)`);
  const res = await fetch(url, { signal }).catch((e: unknown) => {
    throw new InstallError(`${src.kind}: fetching ${url} failed: ${(e as Error).message}`);
  });
  if (!res.ok || !res.body) throw new InstallError(`${src.kind}: fetching ${url}: HTTP ${res.status}`);
  const h = createHash('sha256');
  let bytes = 0;
  for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) {
    h.update(c);
    bytes += c.length;
  }
  if (src.kind === 'liveimg' && src.checksum && h.digest('hex') !== src.checksum) throw new InstallError(`liveimg: the checksum of ${url} does not match --checksum=${src.checksum}`);
  log.line('INFO', `${src.kind}: ${src.kind === 'url' ? 'install tree' : 'image'} ${src.url} (${bytes} bytes) installed`);
  return { ...src, bytes };
}
