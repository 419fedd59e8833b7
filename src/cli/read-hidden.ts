// Reads one line from the terminal without echoing it (a password prompt). Ctrl-C aborts the
// command (exit 99), Ctrl-D ends the input, Backspace erases.
import { EXIT } from '../errors.js';

export function readHidden(prompt: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr): Promise<string> {
  return new Promise((resolve) => {
    output.write(prompt);
    const wasRaw = input.isRaw;
    input.setRawMode?.(true);
    input.resume();
    let text = '';
    const done = (value: string | undefined) => {
      input.removeListener('data', onData);
      input.setRawMode?.(wasRaw);
      input.pause();
      output.write('\n');
      if (value === undefined) process.exit(EXIT.interrupted);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done(text);
        if (ch === '\u0003') return done(undefined);
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else if (ch >= ' ') text += ch;
      }
    };
    input.on('data', onData);
  });
}
