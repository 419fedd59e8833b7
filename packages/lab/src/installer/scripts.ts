// Kickstart scripts (%pre, %post, %onerror, %traceback) run by the simulated installer as real
// shell processes, the way Anaconda runs them: %pre, %onerror, %traceback and %post --nochroot
// in the installer's environment, %post in the installed system (a chroot there; here a second
// sandbox). Absolute paths under the mapped directories are rewritten into the sandbox, as for
// the ramdisk's commands; --log appends the script's output to a file; --erroronfail is the
// caller's to judge from the exit code.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { commandOptions, type KsSection } from 'tsbm/lib/modules/anaconda/kickstart-parse.js';
import { sandboxCommand } from '../lab/command-rewrite.js';
import { shellExecHandler } from '../ssh/exec.js';
import type { SpawnerPool } from '../ssh/spawner-pool.js';
import { InstallError } from './commands.js';

/** Directories mapped into a script's sandbox on top of the ramdisk's (dev, run, tmp, etc, var, sys, proc). */
const INSTALLER_EXTRA_DIRS = ['root', 'mnt', 'home', 'boot'];
const INTERPRETERS = new Set(['/bin/sh', '/usr/bin/sh', '/bin/bash', '/usr/bin/bash']);

export interface ScriptEnv {
  /** The installer's environment. */
  installerRoot: string;
  /** The installed system (%post without --nochroot). */
  sysimage: string;
  toolDirs: string[];
  env: Record<string, string>;
  spawner?: SpawnerPool;
  signal: AbortSignal;
}

export interface ScriptRun {
  rc: number;
  output: string;
  erroronfail: boolean;
}

/** A path as a script in `root` sees it (for --log and %include). */
export function inSandbox(root: string, path: string): string {
  return join(root, path.replace(/^\/+/, ''));
}

export async function runScript(s: KsSection, n: number, e: ScriptEnv): Promise<ScriptRun> {
  const { options } = commandOptions(s.args, new Set(['log', 'interpreter']));
  for (const k of options.keys()) {
    if (!['nochroot', 'erroronfail', 'log', 'interpreter'].includes(k)) throw new InstallError(`kickstart line ${s.line}: %${s.kind} has no option --${k}`);
  }
  const interpreter = typeof options.get('interpreter') === 'string' ? String(options.get('interpreter')) : '/bin/sh';
  if (!INTERPRETERS.has(interpreter)) throw new InstallError(`kickstart line ${s.line}: the simulated installer runs %${s.kind} scripts with sh or bash only, not ${interpreter}`);
  const chroot = s.kind === 'post' && options.get('nochroot') !== true;
  const root = chroot ? e.sysimage : e.installerRoot;
  const file = join(root, 'tmp', `ks-script-${s.kind}-${n}.sh`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, sandboxCommand(s.body, root, INSTALLER_EXTRA_DIRS), { mode: 0o700 });
  const shell = shellExecHandler({ cwd: root, pathPrefix: e.toolDirs, env: e.env, ...(e.spawner ? { spawner: e.spawner } : {}) });
  const proc = shell(`exec ${interpreter.endsWith('bash') ? 'bash' : 'sh'} ${file}`, { env: {}, user: 'root' });
  const chunks: Buffer[] = [];
  proc.stdout?.on('data', (c: Buffer) => chunks.push(c));
  proc.stderr?.on('data', (c: Buffer) => chunks.push(c));
  proc.stdin?.end();
  const kill = () => proc.kill('SIGKILL');
  e.signal.addEventListener('abort', kill, { once: true });
  const rc = await new Promise<number>((resolve) => {
    proc.once('error', () => resolve(127));
    proc.once('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  }).finally(() => e.signal.removeEventListener('abort', kill));
  const output = Buffer.concat(chunks).toString('utf8');
  const log = options.get('log');
  if (typeof log === 'string') {
    const to = inSandbox(root, log);
    mkdirSync(dirname(to), { recursive: true });
    appendFileSync(to, output);
  }
  return { rc, output, erroronfail: options.get('erroronfail') === true };
}
