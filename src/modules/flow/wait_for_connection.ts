// wait_for_connection: wait until the host accepts SSH again (after a reboot or a ramdisk boot).
import { Type } from '../../schema/type-builder.js';
import { defineModule } from '../../module-api/types.js';
import { WaitTimeoutError, sleep, waitUntil } from '../../util/wait.js';

const args = Type.Object(
  {
    timeout: Type.Optional(Type.Number({ minimum: 0, default: 600, description: 'Seconds before failing.' })),
    delay: Type.Optional(Type.Number({ minimum: 0, default: 0, description: 'Seconds to wait before the first attempt.' })),
    sleep: Type.Optional(Type.Number({ minimum: 0.05, default: 1, description: 'Seconds between attempts.' })),
    connect_timeout: Type.Optional(Type.Number({ minimum: 0.1, default: 5, description: 'Seconds one connection attempt may take.' })),
  },
  { additionalProperties: false },
);

export const waitForConnectionModule = defineModule({
  name: 'wait_for_connection',
  summary: 'Wait until the host answers over its connection (SSH login and a trivial command)',
  runsOn: 'controller',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  example: `- name: Wait for the node to come back
  wait_for_connection:
    timeout: 900`,
  async run(ctx, a) {
    const start = Date.now();
    if (a.delay) await sleep(a.delay * 1000, ctx.signal);
    try {
      await waitUntil(
        async () => {
          const conn = await ctx.connect({ timeoutMs: (a.connect_timeout ?? 5) * 1000 });
          try {
            const r = await conn.exec(['true'], { timeout: (a.connect_timeout ?? 5) * 1000, signal: ctx.signal });
            return r.rc === 0 ? true : undefined;
          } finally {
            await conn.close();
          }
        },
        {
          timeoutMs: (a.timeout ?? 600) * 1000,
          intervalMs: (a.sleep ?? 1) * 1000,
          signal: ctx.signal,
          what: `a connection to ${ctx.host}`,
          onProgress: ({ elapsedMs, lastError }) =>
            ctx.progress({
              message: `waiting for a connection to ${ctx.host} (${Math.round(elapsedMs / 1000)}s)${lastError instanceof Error ? `: ${lastError.message}` : ''}`,
            }),
        },
      );
    } catch (e) {
      if (e instanceof WaitTimeoutError) return { changed: false, failed: true, msg: e.message, elapsed: Math.round(e.elapsedMs / 1000) };
      throw e;
    }
    return { changed: false, elapsed: Math.round((Date.now() - start) / 1000) };
  },
});
