// Where an executable lives, looked up the way a shell would: the first directory (of PATH, or
// of the list given) holding an executable file of that name.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export function findProgram(name: string, dirs: readonly string[] = (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)): string | undefined {
  for (const dir of dirs) {
    const file = join(dir || '.', name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      /* not here */
    }
  }
  return undefined;
}
