// Folds a line to a terminal width, counting only visible characters (ANSI colour codes take
// no room). The TTY renderer uses it instead of listr2's wrapping, whose continuation lines
// are indented past the terminal's edge and so get wrapped a second time by the terminal.

const TOKEN = /\x1b\[[0-9;?]*[A-Za-z]|[\s\S]/gu;
const ESCAPE = /^\x1b\[/;

/**
 * Lines of at most `width` visible characters; every line after the first starts with
 * `continuation` (counted in the width). Breaks at a space when one is in the second half of
 * the line, else mid-word (JSON, URLs). Newlines in `text` start a new continuation line.
 */
export function foldLine(text: string, width: number, continuation = ''): string[] {
  const room = Math.max(1, width);
  const cont = continuation.length < room ? continuation : '';
  const out: string[] = [];
  let cur: string[] = []; // tokens of the line being built (after the continuation)
  let visible = 0;
  let start = 0; // visible width taken by the continuation
  const emit = (tokens: string[]) => out.push(((out.length > 0 ? cont : '') + tokens.join('')).trimEnd());
  const restart = (rest: string[]) => {
    start = cont.length;
    cur = rest;
    visible = start + rest.filter((t) => !ESCAPE.test(t)).length;
  };
  for (const tok of text.match(TOKEN) ?? []) {
    if (ESCAPE.test(tok)) {
      cur.push(tok);
      continue;
    }
    if (tok === '\n') {
      emit(cur);
      restart([]);
      continue;
    }
    if (visible >= room) {
      const space = cur.lastIndexOf(' ');
      const before = space < 0 ? 0 : start + cur.slice(0, space).filter((t) => !ESCAPE.test(t)).length;
      if (space > 0 && before > start + (room - start) / 2) {
        emit(cur.slice(0, space));
        restart(cur.slice(space + 1));
      } else {
        emit(cur);
        restart([]);
      }
      if (tok === ' ' && cur.length === 0) continue; // no leading blank after a fold
    }
    cur.push(tok);
    visible++;
  }
  emit(cur);
  return out;
}
