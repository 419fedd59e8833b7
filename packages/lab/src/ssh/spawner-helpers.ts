// Starting one spawner process and talking to it. The spawner is C (spawner.c), compiled here on
// first use with the machine's cc into a cache keyed by its source: its posix_spawn copies no
// page tables and loads no interpreter, the cheapest start of a command measured here (about
// 2 ms a command against 5 for perl's fork and 5 to 13 for node's, on a loaded 2-core machine).
// Where it cannot be built (no compiler, or the build fails) the node worker (spawner-worker.ts)
// takes its place: it needs nothing the lab does not already run on. TSBM_SIM_SPAWNER=node asks
// for the fallback (tests run both).
import { execFileSync, type ChildProcess, fork, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findProgram } from 'tsbm/lib/util/find-program.js';
import { PACKAGE_ROOT } from '../lab/package-paths.js';
import {
  encodeKill,
  encodeSpawn,
  ReplyReader,
  type SpawnReply,
  type SpawnRequest,
} from './spawner-protocol.js';

export type SpawnerKind = 'c' | 'node';

export interface SpawnerHelper {
  readonly kind: SpawnerKind;
  readonly process: ChildProcess;
  /** Still takes requests. */
  readonly open: boolean;
  /** Throws when the request cannot be encoded (a NUL byte in an argument). */
  send(req: SpawnRequest): void;
  /** Signals the process group of command `id`, now or as soon as it has started. */
  signal(id: number, signal: NodeJS.Signals): void;
  /** Ends the channel: the helper kills every command it still runs and exits. */
  close(): void;
}

/** The C source: shipped as source, so under src/ whether this runs from src or dist. */
const C_SOURCE = join(PACKAGE_ROOT, 'src', 'ssh', 'spawner.c');

/** The compiled node worker: beside this file when running from dist, else in dist (tests run src). */
function nodeWorkerFile(): string | undefined {
  const here = fileURLToPath(new URL('./spawner-worker.js', import.meta.url));
  if (existsSync(here)) return here;
  const built = join(PACKAGE_ROOT, 'dist', 'ssh', 'spawner-worker.js');
  return existsSync(built) ? built : undefined;
}

/**
 * Where the compiled C spawner is kept: the first of $XDG_CACHE_HOME/tsbm, ~/.cache/tsbm and a
 * per-user directory in the temp dir that exists (or can be made) and only this user can write,
 * since whoever can replace the binary there runs code as the lab.
 */
function cacheDir(): string | undefined {
  const uid = process.getuid?.();
  const xdg = process.env.XDG_CACHE_HOME;
  const dirs = xdg && isAbsolute(xdg) ? [join(xdg, 'tsbm')] : [];
  try {
    dirs.push(join(homedir(), '.cache', 'tsbm'));
  } catch {
    /* no home directory */
  }
  dirs.push(join(tmpdir(), `tsbm-${uid ?? 'user'}`));
  for (const dir of dirs) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const st = lstatSync(dir);
      if (st.isDirectory() && (uid === undefined || st.uid === uid) && (st.mode & 0o022) === 0) return dir;
    } catch {
      /* read-only or not ours: the next one */
    }
  }
  return undefined;
}

/**
 * The C spawner's binary, compiled once per source (and machine type) and shared by every lab
 * on the machine. The compiler writes a name of its own that is then renamed into place, so
 * labs starting together never run a half-written file. Undefined without a compiler or when
 * the build fails.
 */
function buildCSpawner(): string | undefined {
  let source: Buffer;
  try {
    source = readFileSync(C_SOURCE);
  } catch {
    return undefined;
  }
  const hash = createHash('sha256')
    .update(source)
    .update(`\0${process.platform}-${process.arch}`)
    .digest('hex');
  const dir = cacheDir();
  if (!dir) return undefined;
  const file = join(dir, `tsbm-spawner-${hash.slice(0, 16)}`);
  try {
    accessSync(file, constants.X_OK);
    return file;
  } catch {
    /* not built yet */
  }
  const cc = findProgram('cc') ?? findProgram('gcc');
  if (!cc) return undefined;
  const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    execFileSync(cc, ['-O2', '-o', tmp, C_SOURCE], { stdio: 'ignore', timeout: 120_000 });
    renameSync(tmp, file);
    return file;
  } catch {
    rmSync(tmp, { force: true });
    return undefined;
  }
}

let cSpawner: { file: string | undefined } | undefined;

/** The compiled C spawner, built at most once per process (a failed build is not retried). */
export function cSpawnerBinary(): string | undefined {
  cSpawner ??= { file: buildCSpawner() };
  return cSpawner.file;
}

/**
 * C, unless TSBM_SIM_SPAWNER=node asks for the fallback or the C spawner cannot be built here
 * (asking for 'c' where it cannot be built gets node, as if nothing had been asked).
 */
export function defaultSpawnerKind(): SpawnerKind {
  if (process.env.TSBM_SIM_SPAWNER === 'node') return 'node';
  return cSpawnerBinary() ? 'c' : 'node';
}

/** A starter for helpers of this kind, or undefined when its program is not installed or built. */
export function helperStarter(
  kind: SpawnerKind,
): ((address: string, onReply: (m: SpawnReply) => void) => SpawnerHelper) | undefined {
  if (kind === 'c') {
    const binary = cSpawnerBinary();
    return binary ? (address, onReply) => pipeHelper('c', binary, [address], onReply) : undefined;
  }
  const file = nodeWorkerFile();
  return file ? (address, onReply) => nodeHelper(file, address, onReply) : undefined;
}

/** The C spawner: framed requests on its stdin, replies on its stdout. */
function pipeHelper(
  kind: 'c',
  program: string,
  args: string[],
  onReply: (m: SpawnReply) => void,
): SpawnerHelper {
  const p = spawn(program, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const reader = new ReplyReader(onReply);
  p.stdout.on('data', (b: Buffer) => reader.push(b));
  // EPIPE once it has died: its 'exit' fails the commands it had.
  p.stdin.on('error', () => {});
  let open = true;
  p.once('exit', () => (open = false));
  p.once('error', () => (open = false));
  return {
    kind,
    process: p,
    get open() {
      return open && p.stdin.writable;
    },
    send: (req) => p.stdin.write(encodeSpawn(req)),
    signal: (id, signal) => p.stdin.write(encodeKill(id, signal)),
    close: () => p.stdin.end(),
  };
}

function nodeHelper(file: string, address: string, onReply: (m: SpawnReply) => void): SpawnerHelper {
  // Small heap, none of the parent's flags (a profiler or inspector would follow it).
  const p = fork(file, [address], {
    execArgv: ['--max-old-space-size=64'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  p.on('message', onReply);
  return {
    kind: 'node',
    process: p,
    get open() {
      return p.connected;
    },
    send: (req) => p.send(req),
    signal: (id, signal) => p.send({ id, kill: signal }),
    close: () => {
      if (p.connected) p.disconnect();
    },
  };
}
