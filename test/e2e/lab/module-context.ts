// A ModuleContext over a real Connection, for tests that run one module against a real host
// (a loop disk on this machine, an sshd in a namespace) without the whole executor.
import type { Connection } from '../../../src/connection/types.js';
import type { ModuleContext, RunServices } from '../../../src/module-api/types.js';
import type { Vars } from '../../../src/types.js';
import { execSteps } from '../../../src/connection/exec-steps.js';

export interface TestContext extends ModuleContext {
  logs: string[];
  commands: string[][];
  secrets: string[];
}

export function testContext(conn: Connection, vars: Vars, opts: { check?: boolean } = {}): TestContext {
  const store = new Map<string, unknown>();
  const services: RunServices = {
    playbookDir: process.cwd(),
    tmpDir: '/tmp',
    get<T>(key: string, create: () => T): T {
      if (!store.has(key)) store.set(key, create());
      return store.get(key) as T;
    },
    onClose() {},
  };
  const ctx: TestContext = {
    host: String(vars.inventory_hostname ?? conn.host),
    vars,
    check: opts.check ?? false,
    diff: false,
    signal: new AbortController().signal,
    services,
    task: 'test task',
    logs: [],
    commands: [],
    secrets: [],
    exec(argv, o) {
      ctx.commands.push([...argv]);
      return conn.exec(argv, o);
    },
    execSteps(steps, o) {
      for (const argv of steps) ctx.commands.push([...argv]);
      return execSteps(conn, steps, o);
    },
    execShell(command, o) {
      ctx.commands.push(['sh', '-c', command]);
      return conn.execShell(command, o);
    },
    put: (data, path, o) => conn.put(data, path, o),
    get: (path) => conn.get(path),
    local(argv, o) {
      return conn.exec(argv, o);
    },
    connect: async () => conn,
    secret<T extends string>(v: T): T {
      ctx.secrets.push(v);
      return v;
    },
    log(m) {
      ctx.logs.push(m);
    },
    warn(m) {
      ctx.logs.push(`WARN ${m}`);
    },
    progress() {},
  };
  return ctx;
}
