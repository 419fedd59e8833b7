// The bounded stdout/stderr every transport collects a command's output in (see
// util/bounded-buffer.ts): a remote command's output is the remote side's to size, not ours.
import { HeadTailBuffer } from '../util/bounded-buffer.js';
import { DEFAULT_LIMITS } from '../util/limits.js';
import type { ExecOptions } from './types.js';

export function outputBuffers(opts: Pick<ExecOptions, 'maxOutputBytes'>): { out: HeadTailBuffer; err: HeadTailBuffer } {
  const cap = opts.maxOutputBytes ?? DEFAULT_LIMITS.outputBytes;
  return { out: new HeadTailBuffer(cap, 'stdout'), err: new HeadTailBuffer(cap, 'stderr') };
}
