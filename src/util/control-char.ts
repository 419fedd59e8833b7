// Characters that start a new line, or act on a terminal, wherever text lands line by line
// (kickstarts, shell lines, known_hosts, logs): C0 controls, DEL, C1 controls, and Unicode's
// line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const CONTROL_BUT_TAB = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/;

/** The first control character in `text`, named (`U+000A, a newline`), or undefined. */
export function controlCharacterIn(text: string, allowTab = false): string | undefined {
  const m = (allowTab ? CONTROL_BUT_TAB : CONTROL).exec(text);
  if (!m) return undefined;
  return `U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}${m[0] === '\n' ? ', a newline' : ''}`;
}
