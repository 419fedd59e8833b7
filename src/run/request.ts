// What `tsbm run` asks the run layer for: the options the CLI parsed and checked, where the
// run's state lives, and where its output goes. The CLI builds it; src/run/run.ts carries it out.
import type { RunOptions } from '../executor/options.js';
import type { Redactor } from '../output/redact.js';
import type { Verbosity } from '../output/renderer.js';
import type { NodeStoreSetting } from '../nodes/setting.js';
import type { NodeStore } from '../nodes/types.js';
import type { ExtraVarSource } from './extra-vars.js';

export interface RunIo {
  stdout: NodeJS.WriteStream;
  /** Lines for stderr (already redacted by the caller's rules: the run redacts before writing). */
  stderr: (text: string) => void;
  /** ANSI colours on stdout. */
  color: boolean;
}

export interface RunRequest {
  /** The options as given (a resume restores its run's scope over them). */
  opts: RunOptions;
  /** Where each -e came from, in command-line order (a resume replays them). */
  sources: ExtraVarSource[];
  verbosity: Verbosity;
  /** The run journal's directory; undefined with --no-journal (then no locks, no resume). */
  journalDir: string | undefined;
  /** `--lock-dir`, when given (else $TSBM_LOCK_DIR, else the controller's default). */
  lockDir: string | undefined;
  /** Where node locks and records live (--state, $TSBM_STATE, tsbm.cfg; default files beside the locks). */
  state?: NodeStoreSetting;
  /** `--state` as given (the resume hint repeats it: a resume must use the same store). */
  stateFlag?: string;
  /** A store to use instead of opening `state` (tests). */
  nodeStore?: NodeStore;
  /** `--resume RUN|last` [`--force`] [`--retry-failed`]. */
  resume?: { run: string; force: boolean; retryFailed?: boolean };
  /** `--report FILE`, written from the journal when the run ends. */
  report?: string;
  /** The process's one redactor: every line of output passes through it. */
  redactor: Redactor;
  io: RunIo;
}
