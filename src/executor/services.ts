// The per-run RunServices handed to modules: keyed singletons and cleanups that run when
// the run ends, whether it succeeded, failed or was interrupted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunServices } from '../module-api/types.js';

export class RunServicesImpl implements RunServices {
  readonly playbookDir: string;
  private tmp: string | undefined;
  private readonly items = new Map<string, unknown>();
  private readonly cleanups: Array<() => Promise<void> | void> = [];

  constructor(playbookDir: string) {
    this.playbookDir = playbookDir;
  }

  // Created on first use so runs that never need scratch space leave nothing behind.
  get tmpDir(): string {
    if (!this.tmp) this.tmp = mkdtempSync(join(tmpdir(), 'tsbm-run-'));
    return this.tmp;
  }

  get<T>(key: string, create: () => T): T {
    if (!this.items.has(key)) this.items.set(key, create());
    return this.items.get(key) as T;
  }

  onClose(fn: () => Promise<void> | void): void {
    this.cleanups.push(fn);
  }

  /** Runs cleanups newest first; one failing cleanup does not stop the others. */
  async close(onError: (e: unknown) => void): Promise<void> {
    for (const fn of this.cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (e) {
        onError(e);
      }
    }
    if (this.tmp) rmSync(this.tmp, { recursive: true, force: true });
    this.tmp = undefined;
  }
}
