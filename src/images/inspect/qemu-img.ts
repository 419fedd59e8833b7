// How tsbm runs qemu-img, on the controller and on a ramdisk alike: always told the format
// (`-f`, never a probe), only on an absolute path (a name such as `json:{...}` is a qemu
// specification, not a file), and under resource limits set by the shell's `ulimit` before it
// execs qemu-img (RLIMIT_CPU and RLIMIT_AS, as OpenStack's `prlimit` wrapper sets them): a
// hostile header cannot make it spin or eat the machine's memory. The shell is the one every
// command batch already needs, so a ramdisk needs no prlimit.
import type { WritableFormat } from './types.js';

interface ProcessLimits {
  /** RLIMIT_CPU: seconds of CPU time. */
  cpuSeconds: number;
  /** RLIMIT_AS: bytes of address space. */
  addressSpaceBytes: number;
}

const GIB = 1024 ** 3;

/** `qemu-img info`: OpenStack's limits (30 s of CPU, 1 GiB of address space). */
const INFO_LIMITS: Readonly<ProcessLimits> = { cpuSeconds: 30, addressSpaceBytes: GIB };

/** `qemu-img convert`: room for its coroutines and buffers; CPU time as long as the task may take. */
function convertLimits(timeoutMs: number): ProcessLimits {
  return { cpuSeconds: Math.max(60, Math.ceil(timeoutMs / 1000)), addressSpaceBytes: 2 * GIB };
}

const LIMITED = 'ulimit -t "$1" && ulimit -v "$2" && shift 2 && exec "$@"';

/** argv run under the limits: `sh -c 'ulimit -t N && ulimit -v KiB && exec "$@"' sh ARGV...`. */
function limitedArgv(limits: ProcessLimits, argv: readonly string[]): string[] {
  return ['sh', '-c', LIMITED, 'sh', String(limits.cpuSeconds), String(Math.floor(limits.addressSpaceBytes / 1024)), ...argv];
}

function absolute(path: string): string {
  if (!path.startsWith('/')) throw new Error(`qemu-img is only given absolute paths, not ${JSON.stringify(path)}`);
  return path;
}

export function qemuImgInfoArgv(format: WritableFormat, file: string): string[] {
  return limitedArgv(INFO_LIMITS, ['qemu-img', 'info', '--output=json', '-f', format, absolute(file)]);
}

export interface ConvertArgs {
  format: WritableFormat;
  /** raw for a file, host_device for a block device. */
  target: 'raw' | 'host_device';
  source: string;
  dest: string;
  /** -n: write into the existing target (a disk) instead of creating it. */
  existingTarget: boolean;
  timeoutMs: number;
}

export function qemuImgConvertArgv(c: ConvertArgs): string[] {
  return limitedArgv(convertLimits(c.timeoutMs), [
    'qemu-img',
    'convert',
    '-p',
    ...(c.existingTarget ? ['-n'] : []),
    '-f',
    c.format,
    '-O',
    c.target,
    absolute(c.source),
    absolute(c.dest),
  ]);
}

/** The progress qemu-img -p prints, as a percentage, from the latest chunk of its output. */
export function convertPercent(chunk: string): number | undefined {
  const m = /\((\d+(?:\.\d+)?)\/100%\)[^(]*$/.exec(chunk);
  return m ? Number(m[1]) : undefined;
}
