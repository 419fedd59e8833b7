// A file a command writes at its end (JUnit XML, the HTML report) is checked before any work
// starts, so a long run never ends in "cannot write".
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { optionsError } from '../errors.js';

export function checkOutputFile(flag: string, file: string): void {
  const dir = dirname(resolve(file));
  try {
    if (!statSync(dir).isDirectory()) throw new Error('not a directory');
    accessSync(dir, constants.W_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not writable' : (e as Error).message;
    throw optionsError(`${flag} ${file}: directory ${dir} ${why}`, 'create the directory or choose another path');
  }
  try {
    if (statSync(file).isDirectory()) throw optionsError(`${flag} ${file} is a directory`, 'give a file name');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}
