// `sfdisk --json` of a GPT, laid out as util-linux 2.38 prints it (three-space indents,
// partitions joined by `},{`), and the partition device names it derives.
import type { GptTable } from './table.js';
import { formatAttrs } from './sfdisk-types.js';

/** `/dev/vda` + 1 → `/dev/vda1`; a name ending in a digit takes a `p` (`/dev/loop0p1`). */
export function partitionNode(device: string, number: number): string {
  return /\d$/.test(device) ? `${device}p${number}` : `${device}${number}`;
}

export function sfdiskJson(t: GptTable, device: string): string {
  const q = JSON.stringify;
  const lines = [
    '{',
    '   "partitiontable": {',
    '      "label": "gpt",',
    `      "id": ${q(t.diskGuid)},`,
    `      "device": ${q(device)},`,
    '      "unit": "sectors",',
    `      "firstlba": ${t.firstUsable},`,
    `      "lastlba": ${t.lastUsable},`,
  ];
  const parts = t.entries.flatMap((e, i) => {
    if (!e) return [];
    const fields = [
      `            "node": ${q(partitionNode(device, i + 1))}`,
      `            "start": ${e.firstLba}`,
      `            "size": ${e.lastLba - e.firstLba + 1}`,
      `            "type": ${q(e.typeGuid)}`,
      `            "uuid": ${q(e.uniqueGuid)}`,
      ...(e.name ? [`            "name": ${q(e.name)}`] : []),
      ...(e.attributes ? [`            "attrs": ${q(formatAttrs(e.attributes))}`] : []),
    ];
    return [fields.join(',\n')];
  });
  if (parts.length === 0) {
    lines.push('      "sectorsize": 512');
  } else {
    lines.push('      "sectorsize": 512,', '      "partitions": [', `         {\n${parts.join('\n         },{\n')}\n         }`, '      ]');
  }
  lines.push('   }', '}', '');
  return lines.join('\n');
}
