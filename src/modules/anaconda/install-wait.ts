// Waiting for an installer's callbacks (see src/http/install-callbacks.ts): until `end`, an
// `error`, the time-out or an abort, with a progress tick every second. And the words for each
// outcome: the installer's own lines on error, what was (and was not) heard on a time-out, and
// any refused callbacks (wrong token, replayed).
import type { Registration } from '../../http/install-callbacks.js';
import { fmtDuration } from '../../module-api/image-progress.js';

export type InstallOutcome =
  | { kind: 'ended'; elapsedMs: number; startedMs: number | undefined }
  | { kind: 'failed'; elapsedMs: number; startedMs: number | undefined; body: string }
  | { kind: 'timeout'; elapsedMs: number; startedMs: number | undefined };

export interface WaitInstallOptions {
  timeoutMs: number;
  signal: AbortSignal;
  /** Called every tickMs while waiting, with the elapsed time and the phase. */
  onTick?: (elapsedMs: number, reg: Registration) => void;
  tickMs?: number;
  /** When the wait began (default now): callbacks may have come before it. */
  since?: number;
}

function startedAt(reg: Registration, since: number): number | undefined {
  const s = reg.callbacks.find((c) => c.status === 'start');
  return s ? Math.max(0, s.at - since) : undefined;
}

export function waitForInstall(reg: Registration, o: WaitInstallOptions): Promise<InstallOutcome> {
  const since = o.since ?? Date.now();
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (f: () => void) => {
      if (done) return;
      done = true;
      clearInterval(tick);
      clearTimeout(limit);
      off();
      o.signal.removeEventListener('abort', onAbort);
      f();
    };
    const check = () => {
      const elapsedMs = Date.now() - since;
      const startedMs = startedAt(reg, since);
      if (reg.phase === 'ended') finish(() => resolve({ kind: 'ended', elapsedMs, startedMs }));
      else if (reg.phase === 'failed') {
        const body = reg.callbacks.find((c) => c.status === 'error')?.body ?? '';
        finish(() => resolve({ kind: 'failed', elapsedMs, startedMs, body }));
      }
    };
    // Progress on every callback (a phase change) as well as on the tick.
    const off = reg.onChange(() => {
      o.onTick?.(Date.now() - since, reg);
      check();
    });
    const tick = setInterval(() => o.onTick?.(Date.now() - since, reg), o.tickMs ?? 1000);
    const limit = setTimeout(
      () => finish(() => resolve({ kind: 'timeout', elapsedMs: Date.now() - since, startedMs: startedAt(reg, since) })),
      Math.max(0, o.timeoutMs - (Date.now() - since)),
    );
    const onAbort = () => finish(() => reject(o.signal.reason ?? new Error('aborted')));
    o.signal.addEventListener('abort', onAbort, { once: true });
    o.onTick?.(Date.now() - since, reg);
    check();
  });
}

/** The last `max` non-empty lines the installer sent, indented, for a failure message. */
export function installerLines(body: string, max = 25): string {
  const lines = body
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''))
    .filter((l) => l.trim() !== '');
  const shown = lines.slice(-max);
  const cut = lines.length - shown.length;
  return `${cut > 0 ? `  (${cut} earlier lines not shown)\n` : ''}${shown.map((l) => `  | ${l}`).join('\n')}`;
}

/** "3 callbacks refused (wrong token from 10.0.0.7 x2, ...)", or ''. */
export function describeRefusals(reg: Registration): string {
  if (reg.refused.length === 0) return '';
  const groups = new Map<string, number>();
  for (const r of reg.refused) {
    const why = { wrong_token: 'wrong token', replayed: 'replayed', out_of_order: 'out of order', too_large: 'too large', gone: 'after the registration ended' }[r.why];
    const key = `${r.what} with ${why} from ${r.from}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  const parts = [...groups].map(([k, n]) => (n > 1 ? `${k} x${n}` : k));
  return `${reg.refused.length} callback${reg.refused.length === 1 ? '' : 's'} refused (${parts.join('; ')})`;
}

export function phaseWords(reg: Registration, elapsedMs: number): string {
  const t = fmtDuration(elapsedMs / 1000);
  switch (reg.phase) {
    case 'waiting':
      return `waiting for the installer to start (${t})`;
    case 'started':
      return `installing (${t}${reg.disk?.ok ? `, disk ${reg.disk.device}` : ''})`;
    case 'ended':
      return `installed (${t})`;
    case 'failed':
      return `failed (${t})`;
  }
}
