// The second look: what `qemu-img info --output=json -f FORMAT` says about an image the inspector
// already passed. It must agree on the format, name no backing or data file (in any form, `json:`
// included), and give the virtual size the conversion will write.

export interface QemuInfoCheck {
  virtualSize?: number;
  problems: string[];
}

export function checkQemuInfo(stdout: string, format: string): QemuInfoCheck {
  let info: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(stdout);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    info = parsed as Record<string, unknown>;
  } catch {
    return { problems: ['qemu-img info gave no JSON answer'] };
  }
  const problems: string[] = [];
  if (info.format !== format) problems.push(`qemu-img reads it as ${String(info.format)}, not ${format}`);
  const backing = info['backing-filename'] ?? info['full-backing-filename'];
  if (backing !== undefined) problems.push(`it names a backing file ${JSON.stringify(String(backing))}`);
  const data = (info['format-specific'] as { data?: Record<string, unknown> } | undefined)?.data;
  if (data?.['data-file'] !== undefined) problems.push(`it names an external data file ${JSON.stringify(String(data['data-file']))}`);
  const size = info['virtual-size'];
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) problems.push('qemu-img gives no virtual size');
  return { ...(typeof size === 'number' && Number.isSafeInteger(size) ? { virtualSize: size } : {}), problems };
}
