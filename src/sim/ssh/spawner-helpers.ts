// Starting one spawner process and talking to it. Perl (spawner.pl) where it is installed: a
// fork from it costs about a third of one from node, and perl-base is on every Debian machine.
// Else node (spawner-worker.ts). TSBM_SIM_SPAWNER=node|perl picks one (tests run both).
import { accessSync, constants, existsSync } from 'node:fs';
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  encodeKill,
  encodeSpawn,
  ReplyReader,
  type SpawnReply,
  type SpawnRequest,
} from './spawner-protocol.js';

export type SpawnerKind = 'perl' | 'node';

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

/** The perl script: shipped as source, so it sits under src/ whether this runs from src or dist. */
const PERL_SCRIPT = fileURLToPath(new URL('../../../src/sim/ssh/spawner.pl', import.meta.url));

/** The compiled node worker: beside this file when running from dist, else in dist (tests run src). */
function nodeWorkerFile(): string | undefined {
  const here = fileURLToPath(new URL('./spawner-worker.js', import.meta.url));
  if (existsSync(here)) return here;
  const built = fileURLToPath(new URL('../../../dist/sim/ssh/spawner-worker.js', import.meta.url));
  return existsSync(built) ? built : undefined;
}

function findPerl(): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const file = join(dir || '.', 'perl');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** The kind asked for (TSBM_SIM_SPAWNER) or else the cheaper one available. */
export function defaultSpawnerKind(): SpawnerKind {
  const asked = process.env.TSBM_SIM_SPAWNER;
  if (asked === 'node' || asked === 'perl') return asked;
  return findPerl() && existsSync(PERL_SCRIPT) ? 'perl' : 'node';
}

/** A starter for helpers of this kind, or undefined when its program is not installed or built. */
export function helperStarter(
  kind: SpawnerKind,
): ((address: string, onReply: (m: SpawnReply) => void) => SpawnerHelper) | undefined {
  if (kind === 'perl') {
    const perl = findPerl();
    if (!perl || !existsSync(PERL_SCRIPT)) return undefined;
    return (address, onReply) => perlHelper(perl, address, onReply);
  }
  const file = nodeWorkerFile();
  return file ? (address, onReply) => nodeHelper(file, address, onReply) : undefined;
}

function perlHelper(perl: string, address: string, onReply: (m: SpawnReply) => void): SpawnerHelper {
  const p = spawn(perl, [PERL_SCRIPT, address], { stdio: ['pipe', 'pipe', 'inherit'] });
  const reader = new ReplyReader(onReply);
  p.stdout.on('data', (b: Buffer) => reader.push(b));
  // EPIPE once it has died: its 'exit' fails the commands it had.
  p.stdin.on('error', () => {});
  let open = true;
  p.once('exit', () => (open = false));
  p.once('error', () => (open = false));
  return {
    kind: 'perl',
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
