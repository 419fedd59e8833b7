// A ModuleContext whose commands are recorded and answered with success (getenforce: Disabled,
// anything else a one-disk lsblk answer), for tests that a module refuses before it runs anything.
import type { ModuleContext } from '../../src/module-api/types.js';

export function ctxRecording(vars: Record<string, unknown>, playbookDir = '/'): { ctx: ModuleContext; ran: string[] } {
  const ran: string[] = [];
  const run = async (argv: readonly string[]) => {
    ran.push(argv.join(' '));
    return { rc: 0, stdout: argv[0] === 'getenforce' ? 'Disabled\n' : '[{"Size": 1}]', stderr: '' };
  };
  const ctx = {
    host: 'node7',
    task: 'Install',
    vars,
    check: false,
    diff: false,
    signal: new AbortController().signal,
    services: { playbookDir, tmpDir: '/tmp', get: <T>(_k: string, c: () => T) => c(), onClose: () => undefined },
    exec: run,
    execSteps: async (steps: readonly (readonly string[])[]) => Promise.all(steps.map(run)),
    execShell: async (c: string) => run([c]),
    put: async () => undefined,
    get: async () => Buffer.from(''),
    local: run,
    connect: async () => {
      throw new Error('no');
    },
    secret: <T extends string>(v: T) => v,
    log: () => undefined,
    warn: () => undefined,
    progress: () => undefined,
  } as unknown as ModuleContext;
  return { ctx, ran };
}
