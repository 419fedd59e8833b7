// Typed events: the executor emits, renderers / journal / JUnit subscribe. Nothing else prints.
import type { SourcePos } from '../errors.js';

export type HostStatus = 'ok' | 'changed' | 'failed' | 'unreachable' | 'skipped' | 'rescued' | 'ignored';

export interface HostStats {
  ok: number;
  changed: number;
  unreachable: number;
  failed: number;
  skipped: number;
  rescued: number;
  ignored: number;
}

interface Base {
  time: number; // epoch ms
}

export type TsbmEvent =
  | (Base & { type: 'run_start'; runId: string; playbook: string; version: string; options: Record<string, unknown> })
  | (Base & { type: 'play_start'; play: string; hosts: string[]; pos?: SourcePos })
  | (Base & { type: 'task_start'; play: string; task: string; taskId: string; module: string; pos?: SourcePos; handler?: boolean })
  | (Base & { type: 'host_task_start'; host: string; task: string; taskId: string; args?: unknown })
  | (Base & {
      type: 'host_result';
      host: string;
      task: string;
      taskId: string;
      status: HostStatus;
      changed: boolean;
      msg?: string;
      item?: unknown;
      result?: Record<string, unknown>;
      durationMs: number;
    })
  | (Base & { type: 'retry'; host: string; task: string; taskId: string; attempt: number; retries: number; msg?: string })
  | (Base & {
      type: 'progress';
      host: string;
      task: string;
      taskId: string;
      message: string;
      current?: number;
      total?: number;
      unit?: string;
      elapsedMs?: number;
    })
  | (Base & { type: 'log'; host?: string; task?: string; level: 1 | 2 | 3; message: string })
  | (Base & { type: 'warning'; host?: string; task?: string; message: string })
  | (Base & { type: 'recap'; stats: Record<string, HostStats>; durationMs: number })
  | (Base & { type: 'run_end'; exitCode: number; durationMs: number });

export type TsbmEventType = TsbmEvent['type'];
export type Listener = (event: TsbmEvent) => void;

/** A tiny synchronous bus. Subscribers must not throw; a throwing one is isolated. */
export class EventBus {
  private readonly listeners: Listener[] = [];
  on(listener: Listener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }
  emit(event: TsbmEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // a broken renderer must not break the run
      }
    }
  }
}
