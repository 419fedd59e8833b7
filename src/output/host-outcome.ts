// How a host ended a run, in one form from the executor to every output: the recap, JUnit, the
// HTML report, JSON Lines and `tsbm runs show` all read it from the recap event (journals of
// older versions, and runs killed before their recap, are read by `outcomesFrom`).
import type { Static } from '@sinclair/typebox';
import type { hostEndSchema } from './event-schema.js';

export type HostEnd = Static<typeof hostEndSchema>;
export type NodeEnd = NonNullable<HostEnd['node']>;

/** `deploy failed, Off, media ejected` / `active: oci://r/os:42 since 2026-12-01 14:35 UTC`. */
export function nodeText(node: NodeEnd): string {
  const parts: string[] = [node.state];
  if (node.state === 'active' && node.image) parts[0] = `active: ${node.image}${node.since ? ` since ${utc(node.since)}` : ''}`;
  if (node.power) parts.push(node.power === 'unknown' ? 'power unknown (the BMC did not answer)' : node.power);
  if (node.media) parts.push(node.media === 'unknown' ? 'media unknown' : `media ${node.media}`);
  if (node.protected) parts.push('protected');
  return parts.join(', ');
}

const utc = (ms: number) => `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
