// What a host name may not hold: it reaches command lines (kickstarts, config drives, SSH
// known_hosts), file names (journals, locks) and terminal output, where a newline or another
// control character starts a new line of someone else's choosing. Checked wherever an inventory
// creates a host (YAML files, inventory scripts, Ironic imports).

// C0 controls, DEL, C1 controls, and Unicode's line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Why `name` cannot be a host name, or undefined when it can. */
export function hostNameProblem(name: string): string | undefined {
  if (name === '') return 'a host name cannot be empty';
  const m = CONTROL.exec(name);
  if (m) return `the host name holds a control character (U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}${m[0] === '\n' ? ', a newline' : ''})`;
  return undefined;
}
