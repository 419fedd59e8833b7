// What a disk argument must look like before it goes on a command line that wipes it: an
// absolute path under /dev/ (so never an option such as `--help`, never a relative path or a
// file elsewhere), without `..` segments or whitespace. The same rule as the schemas' pattern,
// applied again to values that bypass the schema (a registered root_device result, which comes
// from the ramdisk's own lsblk).
const DEVICE_PATTERN = '^/dev/[^\\s]+$';

/** Why `device` is not an acceptable disk path, or undefined when it is. */
export function devicePathProblem(device: string): string | undefined {
  if (!new RegExp(DEVICE_PATTERN).test(device)) return `${JSON.stringify(device)} is not an absolute /dev/ path`;
  if (device.split('/').some((seg) => seg === '..' || seg === '.')) return `${JSON.stringify(device)} has . or .. segments`;
  return undefined;
}
