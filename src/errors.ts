// One error type for everything an operator can cause or fix. It carries where (file:line:col),
// what happened, what to do, and the exit code (as ansible-playbook's; README.md lists them). The CLI prints it on one line.

export const EXIT = {
  ok: 0,
  error: 1,
  hostFailed: 2,
  unreachableOrParse: 4,
  badOptions: 5,
  interrupted: 99,
  unexpected: 250,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export interface SourcePos {
  file: string;
  line: number; // 1-based
  col: number; // 1-based
}

export function formatPos(pos: SourcePos | undefined): string {
  return pos ? `${pos.file}:${pos.line}:${pos.col}` : '';
}

export type ErrorKind = 'parse' | 'options' | 'template' | 'runtime' | 'unreachable';

export class TsbmError extends Error {
  readonly kind: ErrorKind;
  readonly pos: SourcePos | undefined;
  readonly hint: string | undefined;
  readonly host: string | undefined;
  readonly task: string | undefined;

  constructor(
    kind: ErrorKind,
    message: string,
    opts: { pos?: SourcePos; hint?: string; host?: string; task?: string; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'TsbmError';
    this.kind = kind;
    this.pos = opts.pos;
    this.hint = opts.hint;
    this.host = opts.host;
    this.task = opts.task;
  }

  get exitCode(): ExitCode {
    switch (this.kind) {
      case 'parse':
      case 'template':
      case 'unreachable':
        return EXIT.unreachableOrParse;
      case 'options':
        return EXIT.badOptions;
      default:
        return EXIT.error;
    }
  }

  /** The one-line form: `file:line:col: message (hint)`. */
  oneLine(): string {
    const where = formatPos(this.pos);
    const head = where ? `${where}: ` : '';
    const tail = this.hint ? ` (${this.hint})` : '';
    return `${head}${this.message}${tail}`.replace(/\s*\n\s*/g, ' ');
  }
}

export const parseError = (message: string, pos?: SourcePos, hint?: string): TsbmError =>
  new TsbmError('parse', message, { ...(pos ? { pos } : {}), ...(hint ? { hint } : {}) });

export const optionsError = (message: string, hint?: string): TsbmError =>
  new TsbmError('options', message, hint ? { hint } : {});

/** Raised by connections when a host cannot be reached at all (exit 4, "unreachable" in the recap). */
export class UnreachableError extends TsbmError {
  /** A setting no retry fixes (no credentials, an unusable key): waits end at once. */
  readonly setting: boolean;

  constructor(host: string, message: string, cause?: unknown, hint?: string, opts: { setting?: boolean } = {}) {
    super('unreachable', message, { host, cause, ...(hint ? { hint } : {}) });
    this.name = 'UnreachableError';
    this.setting = opts.setting === true;
  }
}

/**
 * The host's SSH key was refused (mismatch, revoked, unknown under strict checking): no retry
 * fixes it, so waits stop at once instead of retrying until their timeout.
 */
export class HostKeyError extends UnreachableError {
  constructor(host: string, message: string, cause?: unknown, hint?: string) {
    super(host, message, cause, hint);
    this.name = 'HostKeyError';
  }
}
