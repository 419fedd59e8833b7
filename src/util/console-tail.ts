// The last lines of a node's serial console captured to a file on the controller (a console
// server's log, a lab VM's console): what a failure message shows of where the node stopped.
// Terminal control sequences (a firmware's screen drawing) are dropped, so the lines read plainly.
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';

const READ_BYTES = 64 * 1024;

export function consoleTail(file: string, lines = 15): string[] {
  if (!existsSync(file)) return [];
  const fd = openSync(file, 'r');
  try {
    const size = statSync(file).size;
    const len = Math.min(size, READ_BYTES);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf
      .toString('latin1')
      .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
      .replace(/\r/g, '\n')
      .replace(/[^\x20-\x7e\n]/g, '')
      .split('\n')
      .map((l) => l.trimEnd())
      .filter((l) => l.trim() !== '')
      .slice(-lines);
  } finally {
    closeSync(fd);
  }
}
