// Fake connections for executor tests: every call is recorded, commands are answered by a
// responder, hosts can be made unreachable. Honours ExecOptions.signal like a real transport.
import type { Readable } from 'node:stream';
import type {
  Connection,
  ConnectionFactory,
  ConnectionSpec,
  ExecOptions,
  ExecResult,
  PutOptions,
} from '../../src/connection/types.js';
import { UnreachableError } from '../../src/errors.js';

interface ExecCall {
  host: string;
  argv: readonly string[];
  shell?: string;
  opts: ExecOptions | undefined;
  at: number;
}

export type Responder = (call: ExecCall) => ExecResult | Promise<ExecResult>;

export const ok = (stdout = ''): ExecResult => ({ rc: 0, stdout, stderr: '' });

class FakeConnection implements Connection {
  closed = false;
  readonly files = new Map<string, Buffer>();
  constructor(
    readonly host: string,
    private readonly log: ExecCall[],
    private readonly respond: Responder,
  ) {}

  private run(call: ExecCall): Promise<ExecResult> {
    if (this.closed) return Promise.reject(new Error(`connection to ${this.host} is closed`));
    this.log.push(call);
    const signal = call.opts?.signal;
    return new Promise<ExecResult>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => reject(signal?.reason ?? new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      Promise.resolve()
        .then(() => this.respond(call))
        .then(resolve, reject)
        .finally(() => signal?.removeEventListener('abort', onAbort));
    });
  }

  exec(argv: readonly string[], opts?: ExecOptions): Promise<ExecResult> {
    return this.run({ host: this.host, argv: [...argv], opts, at: Date.now() });
  }
  execShell(command: string, opts?: ExecOptions): Promise<ExecResult> {
    return this.run({ host: this.host, argv: [], shell: command, opts, at: Date.now() });
  }
  async put(data: Buffer | string | Readable, path: string, _opts?: PutOptions): Promise<void> {
    this.files.set(path, Buffer.isBuffer(data) ? data : Buffer.from(typeof data === 'string' ? data : ''));
  }
  async get(path: string): Promise<Buffer> {
    const f = this.files.get(path);
    if (!f) throw new Error(`${path}: no such file`);
    return f;
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

export interface FakeLab {
  factory: ConnectionFactory;
  /** Every exec, in order, all hosts. */
  calls: ExecCall[];
  /** Connections opened, by host name (localhost for local specs). */
  opened: FakeConnection[];
  /** Specs asked for. */
  specs: ConnectionSpec[];
  argvs(host: string): string[];
}

export function fakeLab(opts: { respond?: Responder; unreachable?: readonly string[] } = {}): FakeLab {
  const calls: ExecCall[] = [];
  const opened: FakeConnection[] = [];
  const specs: ConnectionSpec[] = [];
  const respond = opts.respond ?? (() => ok());
  const factory: ConnectionFactory = async (spec) => {
    specs.push(spec);
    if (opts.unreachable?.includes(spec.host)) {
      throw new UnreachableError(spec.host, `cannot connect to ${spec.host}: connection refused`);
    }
    const c = new FakeConnection(spec.host, calls, respond);
    opened.push(c);
    return c;
  };
  return {
    factory,
    calls,
    opened,
    specs,
    argvs: (host) => calls.filter((c) => c.host === host).map((c) => c.shell ?? c.argv.join(' ')),
  };
}
