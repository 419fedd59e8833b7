// sgdisk's command line, as far as tsbm and the simulated lab use it: the options in the order
// given (sgdisk applies them in that order) and the one device.

export type SgdiskOp =
  | { op: 'new'; value: string }
  | { op: 'typecode'; value: string }
  | { op: 'change-name'; value: string }
  | { op: 'delete'; value: string }
  | { op: 'move-second-header' }
  | { op: 'zap' }
  | { op: 'zap-all' }
  | { op: 'clear' }
  | { op: 'print' };

type OpName = SgdiskOp['op'];

const WITH_VALUE: Record<string, OpName> = { n: 'new', t: 'typecode', c: 'change-name', d: 'delete' };
const FLAGS: Record<string, OpName> = {
  e: 'move-second-header',
  z: 'zap',
  Z: 'zap-all',
  o: 'clear',
  p: 'print',
};
const LONG: Record<string, string> = {
  new: 'n',
  typecode: 't',
  'change-name': 'c',
  delete: 'd',
  'move-second-header': 'e',
  zap: 'z',
  'zap-all': 'Z',
  clear: 'o',
  print: 'p',
};

export interface SgdiskCommand {
  ops: SgdiskOp[];
  device?: string;
}

export class UsageError extends Error {}

function make(letter: string, value: string | undefined): SgdiskOp {
  const withValue = WITH_VALUE[letter];
  if (withValue) {
    if (value === undefined) throw new UsageError(`sgdisk: option -${letter} needs a value`);
    return { op: withValue, value } as SgdiskOp;
  }
  return { op: FLAGS[letter]! } as SgdiskOp;
}

export function parseSgdiskArgs(argv: string[]): SgdiskCommand {
  const ops: SgdiskOp[] = [];
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--') && a.length > 2) {
      const [name, inline] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      const letter = LONG[name];
      if (!letter)
        throw new UsageError(
          `sgdisk: unknown option --${name} (this stand-in implements ${Object.keys(LONG).join(', ')})`,
        );
      const value = WITH_VALUE[letter] ? (inline ?? argv[++i]) : undefined;
      ops.push(make(letter, value));
    } else if (a.startsWith('-') && a.length > 1) {
      // Short options cluster like popt's: flags first, a value-taking letter takes the rest or the next word.
      for (let j = 1; j < a.length; j++) {
        const letter = a[j]!;
        if (WITH_VALUE[letter]) {
          const rest = a.slice(j + 1);
          ops.push(make(letter, rest !== '' ? rest : argv[++i]));
          break;
        }
        if (!FLAGS[letter])
          throw new UsageError(
            `sgdisk: unknown option -${letter} (this stand-in implements -n -t -c -d -e -z -Z -o -p)`,
          );
        ops.push(make(letter, undefined));
      }
    } else positional.push(a);
  }
  if (positional.length > 1)
    throw new UsageError(`sgdisk: one device expected, got: ${positional.join(' ')}`);
  return positional[0] === undefined ? { ops } : { ops, device: positional[0] };
}
