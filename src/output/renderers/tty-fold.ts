// Folds a line to a terminal width, counting only visible characters (ANSI colour codes take
// no room). The TTY renderer uses it instead of listr2's wrapping, whose continuation lines
// are indented past the terminal's edge and so get wrapped a second time by the terminal.

const TOKEN = /\x1b\[[0-9;?]*[A-Za-z]|[\s\S]/gu;
const ESCAPE = /^\x1b\[/;

/**
 * Lines of at most `width` visible characters; every line after the first starts with
 * `continuation` (counted in the width). Newlines in `text` start a new continuation line.
 */
export function foldLine(text: string, width: number, continuation = ''): string[] {
  const room = Math.max(1, width);
  const cont = continuation.length < room ? continuation : '';
  const out: string[] = [];
  let cur = '';
  let visible = 0;
  const newLine = () => {
    out.push(cur.trimEnd());
    cur = cont;
    visible = cont.length;
  };
  for (const tok of text.match(TOKEN) ?? []) {
    if (ESCAPE.test(tok)) {
      cur += tok;
    } else if (tok === '\n') {
      newLine();
    } else {
      if (visible >= room) newLine();
      if (visible === cont.length && cur === cont && out.length > 0 && tok === ' ') continue; // no leading blank after a fold
      cur += tok;
      visible++;
    }
  }
  out.push(cur.trimEnd());
  return out;
}
