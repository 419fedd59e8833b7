// What a host name may not hold: it reaches command lines (kickstarts, config drives, SSH
// known_hosts), file names (journals, locks) and terminal output, where a newline or another
// control character starts a new line of someone else's choosing. Checked wherever an inventory
// creates a host (YAML files, inventory scripts, Ironic imports).

import { controlCharacterIn } from '../util/control-char.js';

/** Why `name` cannot be a host name, or undefined when it can. */
export function hostNameProblem(name: string): string | undefined {
  if (name === '') return 'a host name cannot be empty';
  const c = controlCharacterIn(name);
  if (c) return `the host name holds a control character (${c})`;
  return undefined;
}
