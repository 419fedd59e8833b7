// pause: wait a fixed time (non-interactive: no prompt). Ends early, failing, on abort.
import { Type } from '../../schema/type-builder.js';
import { defineModule } from '../../module-api/types.js';
import { sleep } from '../../util/wait.js';

const args = Type.Object(
  {
    seconds: Type.Optional(Type.Number({ minimum: 0, description: 'Seconds to wait' })),
    minutes: Type.Optional(Type.Number({ minimum: 0, description: 'Minutes to wait' })),
  },
  { additionalProperties: false },
);

export const pauseModule = defineModule({
  name: 'pause',
  summary: 'Wait for a number of seconds or minutes',
  runsOn: 'controller',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  example: `- name: Let the BMC settle
  pause:
    seconds: 10`,
  async run(ctx, a) {
    const seconds = (a.seconds ?? 0) + (a.minutes ?? 0) * 60;
    const start = Date.now();
    if (seconds > 0) ctx.progress({ message: `pausing for ${seconds}s` });
    await sleep(seconds * 1000, ctx.signal);
    const delta = Math.round((Date.now() - start) / 1000);
    return { changed: false, msg: `paused for ${seconds}s`, start: new Date(start).toISOString(), delta };
  },
});
