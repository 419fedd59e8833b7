// wait_for: wait, from the target, until a TCP port opens/closes, a path appears/disappears,
// or a file contains a regex. Uses the shared wait loop and reports progress.
import { Type } from '../../schema/type-builder.js';
import { TsbmError } from '../../errors.js';
import { defineModule, type ModuleContext } from '../../module-api/types.js';
import { WaitTimeoutError, sleep, waitUntil } from '../../util/wait.js';

const args = Type.Object(
  {
    host: Type.Optional(Type.String({ default: '127.0.0.1', description: 'Host to probe the port on (seen from the target).' })),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'TCP port to wait for.' })),
    path: Type.Optional(Type.String({ description: 'File to wait for (or to contain search_regex).' })),
    search_regex: Type.Optional(Type.String({ description: 'Regular expression (JavaScript syntax, multiline) the file must match.' })),
    state: Type.Optional(
      Type.Union([Type.Literal('started'), Type.Literal('stopped'), Type.Literal('present'), Type.Literal('absent')], {
        default: 'started',
        description: 'started/present: wait until open or there; stopped/absent: until closed or gone.',
      }),
    ),
    timeout: Type.Optional(Type.Number({ minimum: 0, default: 300, description: 'Seconds before failing.' })),
    delay: Type.Optional(Type.Number({ minimum: 0, default: 0, description: 'Seconds to wait before the first check.' })),
    sleep: Type.Optional(Type.Number({ minimum: 0.05, default: 1, description: 'Seconds between checks.' })),
    connect_timeout: Type.Optional(Type.Number({ minimum: 0.1, default: 5, description: 'Seconds one port probe may take.' })),
  },
  { additionalProperties: false },
);

// Probes a TCP port from the target with whatever it has: bash's /dev/tcp, nc, or python3.
const PORT_PROBE = `h=$1 p=$2 t=$3
if command -v bash >/dev/null 2>&1; then
  if command -v timeout >/dev/null 2>&1; then exec timeout "$t" bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$h" "$p" 2>/dev/null; fi
  exec bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$h" "$p" 2>/dev/null
fi
if command -v nc >/dev/null 2>&1; then exec nc -z -w "$t" "$h" "$p"; fi
if command -v python3 >/dev/null 2>&1; then exec python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), float(sys.argv[3]))' "$h" "$p" "$t" 2>/dev/null; fi
exit 3`;

async function portOpen(ctx: ModuleContext, host: string, port: number, timeoutS: number): Promise<boolean> {
  const r = await ctx.exec(['sh', '-c', PORT_PROBE, 'sh', host, String(port), String(Math.max(1, Math.ceil(timeoutS)))]);
  if (r.rc === 3) {
    throw new TsbmError('runtime', `cannot probe ports on ${ctx.host}: neither bash, nc nor python3 is installed`, {
      host: ctx.host,
      task: ctx.task,
      hint: 'install one of them on the target, or wait with wait_for_connection / path instead',
    });
  }
  return r.rc === 0;
}

export const waitForModule = defineModule({
  name: 'wait_for',
  summary: 'Wait for a port, a file, or a regex in a file on the target',
  runsOn: 'target',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  example: `- name: Wait for the registry
  wait_for:
    port: 5000
    timeout: 60

- name: Wait for the install log to say done
  wait_for:
    path: /var/log/install.log
    search_regex: "install (complete|done)"`,
  async run(ctx, a) {
    const state = a.state ?? 'started';
    const host = a.host ?? '127.0.0.1';
    const timeoutMs = (a.timeout ?? 300) * 1000;
    if (a.port === undefined && a.path === undefined) {
      throw new TsbmError('runtime', 'wait_for needs port or path', { host: ctx.host, task: ctx.task, hint: 'give port: N or path: FILE' });
    }
    if (a.search_regex !== undefined && a.path === undefined) {
      throw new TsbmError('runtime', 'search_regex needs path', { host: ctx.host, task: ctx.task, hint: 'name the file to search in path' });
    }
    const regex = a.search_regex !== undefined ? new RegExp(a.search_regex, 'm') : undefined;
    const wantPresent = state === 'started' || state === 'present';
    const what =
      a.port !== undefined
        ? `port ${host}:${a.port} to be ${wantPresent ? 'open' : 'closed'}`
        : regex
          ? `${a.path} to ${wantPresent ? '' : 'no longer '}match /${a.search_regex}/`
          : `${a.path} to be ${wantPresent ? 'present' : 'absent'}`;
    const start = Date.now();
    if (a.delay) await sleep(a.delay * 1000, ctx.signal);

    const probe = async (): Promise<{ groups?: string[] } | undefined> => {
      let hit: boolean;
      let groups: string[] | undefined;
      if (a.port !== undefined) hit = await portOpen(ctx, host, a.port, a.connect_timeout ?? 5);
      else if (regex) {
        const r = await ctx.exec(['cat', '--', a.path as string]);
        const m = r.rc === 0 ? regex.exec(r.stdout) : null;
        hit = m !== null;
        if (m) groups = m.slice(1);
      } else hit = (await ctx.exec(['test', '-e', a.path as string])).rc === 0;
      return hit === wantPresent ? { ...(groups ? { groups } : {}) } : undefined;
    };

    try {
      const got = await waitUntil(probe, {
        timeoutMs,
        intervalMs: (a.sleep ?? 1) * 1000,
        signal: ctx.signal,
        what,
        onProgress: ({ elapsedMs }) => ctx.progress({ message: `waiting for ${what} (${Math.round(elapsedMs / 1000)}s)` }),
      });
      return {
        changed: false,
        elapsed: Math.round((Date.now() - start) / 1000),
        state,
        ...(a.port !== undefined ? { port: a.port } : {}),
        ...(a.path !== undefined ? { path: a.path } : {}),
        ...(got.groups ? { match_groups: got.groups } : {}),
      };
    } catch (e) {
      if (e instanceof WaitTimeoutError) {
        return { changed: false, failed: true, msg: `timeout: ${e.message}`, elapsed: Math.round(e.elapsedMs / 1000) };
      }
      throw e;
    }
  },
});
