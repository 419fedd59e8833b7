// Test harness for the deploy modules: one simulated ramdisk node as the lab (`tsbm sim`) runs
// it, without the BMC: an in-process SSH server whose commands run with the lab's ramdisk tools
// (packages/lab/ramdisk/bin, and the partitioning stand-ins in packages/lab/ramdisk/standin, which record
// what they ran) first on PATH, paths under /dev, /run, /tmp, /etc, /var, /sys and /proc mapped
// into the node's sandbox directory, SFTP served from it; and a ModuleContext over a real SSH
// connection that records every event, so tests can check argv, files and secrecy end to end.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSsh } from '../../src/connection/ssh.js';
import type { Connection } from '../../src/connection/types.js';
import type { ModuleContext, ModuleDef, ModuleResult, ProgressUpdate } from '../../src/module-api/types.js';
import { Redactor } from '../../src/output/redact.js';
import { sandboxCommand } from '../../packages/lab/src/lab/command-rewrite.js';
import { RAMDISK_TOOLS_DIR, STANDIN_DIR } from '../../packages/lab/src/lab/package-paths.js';
import { shellExecHandler } from '../../packages/lab/src/ssh/exec.js';
import type { Vars } from '../../src/types.js';
import { type SshHost, startSshHost } from '../helpers/ssh-host.js';
import { execSteps } from '../../src/connection/exec-steps.js';
import { splitArgs } from '../../src/modules/commands/split-args.js';

/** The registry and image the node's podman knows (the lab's catalogue format, packages/lab/ramdisk/bin/README.md). */
const SIM_REGISTRY = '10.88.0.1:5001';
const SIM_REF = `${SIM_REGISTRY}/bootc/test:1`;

export interface SimNodeOptions {
  diskMiB?: number;
  /** `user:password` the registry demands; absent: it asks for nothing. */
  registryAuth?: string;
  /** The image's compressed size in the registry's manifest (bytes); absent: the registry gives no manifest. */
  imageBytes?: number;
  /** The image has no bootc. */
  noBootc?: boolean;
  /** podman's version (default Debian 12's, 4.3.1). */
  podmanVersion?: string;
  /** What getenforce says; absent: the ramdisk has no getenforce. */
  selinux?: string;
  /** bootc hangs this many seconds before it writes anything. */
  bootcSleepS?: number;
  /** The node's NICs' MACs (`ip -j link`). */
  macs?: string[];
  /** The node's /proc/meminfo. */
  meminfo?: string;
  /** The node's /sys/class/dmi/id/product_uuid (absent: no such file). */
  productUuid?: string;
  /** More tools (name: sh script), first on PATH. */
  tools?: Record<string, string>;
  /** false: the ramdisk's sshd has no sftp subsystem (files then travel piped). */
  sftp?: false;
}

export interface SimNode {
  host: SshHost;
  /** The node's sandbox: its /dev, /run, /tmp, /etc, ... are directories in here. */
  root: string;
  /** What the tools record (`$TSBM_SIM_ROOT/sim`: podman-run-args, last-authfile, bootc-args, ...). */
  state: string;
  /** The node's disk, /dev/vda on the ramdisk. */
  disk: string;
  conn: Connection;
  events: Array<{ kind: 'log' | 'warn' | 'progress'; message: string }>;
  redactor: Redactor;
  ctx(vars?: Vars, opts?: { check?: boolean }): ModuleContext;
  run<M extends ModuleDef>(
    mod: M,
    args: Record<string, unknown>,
    vars?: Vars,
    opts?: { check?: boolean },
  ): Promise<ModuleResult>;
  close(): Promise<void>;
}

/** The node's sandbox with its disk, node.env and the registry's catalogue (as packages/lab/src/lab/node.ts lays it out). */
function layOut(root: string, o: SimNodeOptions): void {
  for (const d of ['dev', 'run', 'tmp', 'etc/containers', 'var/lib/containers/sim-images', 'sys/class/dmi/id', 'proc', 'sim/images']) {
    mkdirSync(path.join(root, d), { recursive: true });
  }
  const diskBytes = (o.diskMiB ?? 8192) * 1024 * 1024;
  writeFileSync(path.join(root, 'dev/vda'), '');
  truncateSync(path.join(root, 'dev/vda'), diskBytes);
  if (o.meminfo !== undefined) writeFileSync(path.join(root, 'proc/meminfo'), o.meminfo);
  if (o.productUuid !== undefined) writeFileSync(path.join(root, 'sys/class/dmi/id/product_uuid'), o.productUuid);
  const mib = o.imageBytes === undefined ? undefined : Math.ceil(o.imageBytes / 1024 / 1024);
  writeFileSync(
    path.join(root, 'sim/images', `${SIM_REF.replace(/[/:@]/g, '_')}.env`),
    `ID=sha256:${createHash('sha256').update(SIM_REF).digest('hex')}\nSIZE_MIB=${2 * (mib ?? 100)}\nCOMPRESSED_MIB=${mib ?? ''}\nBOOTC=${o.noBootc ? 0 : 1}\n`,
  );
  const env = [
    'TSBM_SIM_NODE=node1',
    `TSBM_SIM_MACS="${(o.macs ?? []).join(' ')}"`,
    `TSBM_SIM_REGISTRY=${SIM_REGISTRY}`,
    `TSBM_SIM_REGISTRY_AUTH=${o.registryAuth ? Buffer.from(o.registryAuth).toString('base64') : ''}`,
    `TSBM_SIM_IMAGES=${path.join(root, 'sim/images')}`,
    `TSBM_SIM_DISK_BYTES=${diskBytes}`,
    `TSBM_SIM_PODMAN_VERSION=${o.podmanVersion ?? '4.3.1'}`,
    `TSBM_SIM_SELINUX=${o.selinux?.trim() ?? 'none'}`,
    ...(o.bootcSleepS !== undefined ? [`TSBM_SIM_BOOTC_SLEEP=${o.bootcSleepS}`] : []),
    'TSBM_SIM_TRACE=1',
    '',
  ];
  writeFileSync(path.join(root, 'sim/node.env'), env.join('\n'));
}

export async function startSimNode(opts: SimNodeOptions = {}): Promise<SimNode> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'tsbm-sim-node-'));
  layOut(root, opts);
  const extraTools = mkdtempSync(path.join(os.tmpdir(), 'tsbm-sim-tools-'));
  for (const [name, script] of Object.entries(opts.tools ?? {})) writeFileSync(path.join(extraTools, name), script, { mode: 0o755 });
  const shell = shellExecHandler({
    cwd: root,
    pathPrefix: [extraTools, RAMDISK_TOOLS_DIR, STANDIN_DIR],
    env: {
      ...(process.env as Record<string, string>),
      TSBM_SIM_ROOT: root,
      TSBM_SIM_ENV: path.join(root, 'sim/node.env'),
      // The stand-ins run (and record their arguments) even where util-linux is installed.
      TSBM_SIM_STANDINS: 'sfdisk,partx',
      TSBM_SIM_NODE_BIN: process.execPath,
    },
  });
  const host = await startSshHost({
    ...(opts.sftp === false ? { sftp: false } : { sftpRoot: root }),
    exec: (command, session) => shell(sandboxCommand(command, root), session),
  });
  const conn = await openSsh(host.spec);
  const events: SimNode['events'] = [];
  const redactor = new Redactor();
  const node: SimNode = {
    host,
    root,
    state: path.join(root, 'sim'),
    disk: path.join(root, 'dev/vda'),
    conn,
    events,
    redactor,
    ctx(vars: Vars = {}, o: { check?: boolean } = {}): ModuleContext {
      const ac = new AbortController();
      return {
        host: 'node1',
        vars,
        check: o.check ?? false,
        diff: false,
        signal: ac.signal,
        task: 'test task',
        services: {
          playbookDir: root,
          tmpDir: root,
          get: <T>(_k: string, create: () => T) => create(),
          onClose: () => undefined,
        },
        exec: (argv, eo) => conn.exec(argv, eo),
        execSteps: (s, eo) => execSteps(conn, s, eo),
        execShell: (c, eo) => conn.execShell(c, eo),
        put: (d, p, po) => conn.put(d, p, po),
        get: (p) => conn.get(p),
        local: (argv, eo) => conn.exec(argv, eo),
        connect: () => openSsh(host.spec),
        secret: <T extends string>(v: T): T => {
          redactor.add(v);
          return v;
        },
        log: (message: string) => events.push({ kind: 'log', message }),
        warn: (message: string) => events.push({ kind: 'warn', message }),
        progress: (u: ProgressUpdate) => events.push({ kind: 'progress', message: u.message }),
      };
    },
    async run(mod, args, vars = {}, o = {}) {
      return mod.run(node.ctx(vars, o), args as never);
    },
    async close() {
      await conn.close();
      await host.close();
      rmSync(root, { recursive: true, force: true });
      rmSync(extraTools, { recursive: true, force: true });
    },
  };
  return node;
}

/** A path on the node as the ramdisk names it (the sandbox directory taken off). */
export function onNode(n: SimNode, hostPath: string): string {
  return hostPath.startsWith(`${n.root}/`) ? hostPath.slice(n.root.length) : hostPath;
}

/**
 * The node's commands one per step: a batch (ModuleContext.execSteps, one remote shell) is
 * split back into the argv lines it ran, so tests can look for a single command.
 */
export function ranSteps(commands: readonly string[]): string[] {
  return commands.flatMap((c) => {
    if (!c.includes('__tsbm_step_')) return [c];
    // Before the login shell is known the batch is `sh -c SCRIPT`; after, the script itself.
    // (A batch whose first step is itself an `sh -c` has more words than that.)
    const words = c.startsWith('sh -c ') ? splitArgs(c) : [];
    const script = words.length === 3 ? (words[2] ?? '') : c;
    return script.split('\n').map((line) => line.replace(/(?: <\/dev\/null)?; printf .*$/, ''));
  });
}
