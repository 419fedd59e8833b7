// iDRAC answers 409 Conflict when asked to power on a node that is on (or off one that is
// off) instead of doing nothing. The caller already asked for the state it is in, so this
// is treated as success.
import type { RedfishError } from '../errors.js';

export function isRedundantPowerConflict(err: RedfishError, resetType: string): boolean {
  if (err.status !== 409) return false;
  const powerChange = ['On', 'ForceOn', 'ForceOff', 'GracefulShutdown'].includes(resetType);
  return powerChange && (err.messages.length === 0 || err.mentions(/already (powered )?(on|off)|in the requested state|PowerState|ResourceInStandby|SYS0?44/i));
}
