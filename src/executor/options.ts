// Options of `tsbm run`, parsed and validated by the CLI (src/cli/run.ts), acted on by the executor.
import type { Vars } from '../types.js';

export { DEFAULT_FORKS } from '../config/options.js';

export type OutputMode = 'tty' | 'plain' | 'json';

export interface RunOptions {
  playbook: string;
  inventories: string[];
  limit?: string;
  tags: string[];
  skipTags: string[];
  /** Already merged in command-line order (later wins). */
  extraVars: Vars;
  /** Default DEFAULT_FORKS. */
  forks: number;
  check: boolean;
  diff: boolean;
  /** `--rebuild`: a deploy may reinstall nodes that are active (protected ones are still refused). */
  rebuild?: boolean;
  /** --force-handlers: notified handlers run on hosts that failed (a play's force_handlers wins). */
  forceHandlers?: boolean;
  startAtTask?: string;
  listHosts: boolean;
  listTasks: boolean;
  listTags: boolean;
  syntaxCheck: boolean;
  output: OutputMode;
  junit?: string;
  /** `--junit-cases`: a testcase per host per play (default) or per host and task. */
  junitCases?: 'host' | 'task';
  verbosity: 0 | 1 | 2 | 3;
  /** `--roles-path`: directories searched for roles after roles/ beside the playbook (TSBM_ROLES_PATH too). */
  rolesPath?: string[];
  /** `--shard I/N`: only hosts of this stable slice (src/executor/shard.ts) are targeted. */
  shard?: { index: number; total: number };
}

/** Executor knobs that are not command-line options (tests shorten them). */
export interface ExecutorTuning {
  /** After SIGINT, how long running tasks may go on before they are aborted (default 10 s). */
  interruptGraceMs?: number;
  /** `until` delay override in ms (tests); otherwise the task's `delay` seconds (default 5). */
  untilDelayMs?: number;
}
