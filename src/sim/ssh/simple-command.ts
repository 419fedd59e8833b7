// A command line that is only quoted words (what tsbm's quoteArgv writes) needs no shell to
// run: the simulated ramdisk can start it directly and save a fork and an exec per command,
// which a thousand-node lab feels. Anything else (operators, expansions, assignments) is left
// to `sh -c`, so behaviour never differs from a real shell's.

const PLAIN = /[A-Za-z0-9_@%+=:,./-]/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** The argv `sh -c command` would run, when the command is plain quoted words; else undefined. */
export function simpleArgv(command: string): string[] | undefined {
  const argv: string[] = [];
  let word: string | undefined; // undefined between words
  let bare = ''; // the unquoted start of the first word, to spot an assignment
  let inBare = true;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === ' ') {
      // Exactly one space between words, as quoteArgv writes: anything else is not ours.
      if (word === undefined) return undefined;
      argv.push(word);
      inBare = false;
      word = undefined;
    } else if (c === "'") {
      const close = command.indexOf("'", i + 1);
      if (close < 0) return undefined;
      word = (word ?? '') + command.slice(i + 1, close);
      i = close;
      inBare = false;
    } else if (c === '\\' && command[i + 1] === "'") {
      word = (word ?? '') + "'";
      i++;
      inBare = false;
    } else if (PLAIN.test(c)) {
      if (inBare) bare += c;
      word = (word ?? '') + c;
    } else return undefined;
  }
  if (word === undefined) return undefined;
  argv.push(word);
  // `NAME=value cmd` sets a variable: the shell's job.
  return ASSIGNMENT.test(bare) ? undefined : argv;
}

/**
 * What to spawn for a command without a shell in between: plain words whose program is `sh`
 * itself (tsbm's PID prelude wraps every killable command so). Other programs keep `sh -c`, so
 * builtins (`kill`, `cd`) and the shell's own not-found and not-executable errors stay exact.
 */
export function directSpawn(command: string): { file: string; args: string[] } | undefined {
  const argv = simpleArgv(command);
  if (argv?.[0] !== 'sh') return undefined;
  return { file: '/bin/sh', args: argv.slice(1) };
}
