// A ramdisk that presents another host key than the one recorded: a hard failure (as
// docs/connections.md says of a changed key), reported at once with what to do. Ramdisks make a
// new host key at every boot, so the usual cause is a key recorded on an earlier boot.
import type { HostKeyError, TsbmError } from '../../errors.js';
import type { ModuleContext } from '../../module-api/types.js';
import { hostError } from '../../module-api/ramdisk-exec.js';

export function ramdiskHostKeyError(ctx: Pick<ModuleContext, 'host' | 'task'>, e: HostKeyError): TsbmError {
  const said = e.message.replace(new RegExp(`^${ctx.host}: `), '');
  return hostError(
    ctx,
    `the ramdisk's SSH host key was refused, so nothing was run on it: ${said}`,
    `a ramdisk makes a new host key at every boot, so a key recorded on an earlier boot no longer matches; ${e.hint ?? 'remove the stale key from known_hosts'}`,
    e,
  );
}
