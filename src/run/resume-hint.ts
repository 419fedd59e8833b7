// What a run that left hosts unfinished (Ctrl-C, SIGTERM, a stopped run) says at its end: how
// to continue it. The command names the same playbook and inventories, the journal and lock
// directories when they are not the defaults, and the node store when --state named it; inline
// -e values must be given again (the journal holds only their names and hashes).
import type { EventBus } from '../output/events.js';
import type { HostEnd } from '../output/host-outcome.js';
import { DEFAULT_JOURNAL_DIR } from '../journal/journal-dir.js';
import type { RunRequest } from './request.js';

/** Listens for the run's outcomes; `hint()` is the line to print once it ended (empty when nothing is unfinished). */
export function watchOutcomes(bus: EventBus): { hint(req: RunRequest, runId: string | undefined): string } {
  let ends: Record<string, HostEnd> = {};
  const off = bus.on((e) => {
    if (e.type === 'recap') ends = e.hosts ?? {};
  });
  return {
    hint(req, runId) {
      off();
      const left = Object.keys(ends).filter((h) => ends[h]!.outcome === 'unfinished');
      if (left.length === 0 || !runId || !req.journalDir) return '';
      const q = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
      const args = [
        'tsbm run',
        q(req.opts.playbook),
        ...req.opts.inventories.flatMap((i) => ['-i', q(i)]),
        ...(req.journalDir !== DEFAULT_JOURNAL_DIR ? ['--journal-dir', q(req.journalDir)] : []),
        ...(req.lockDir ? ['--lock-dir', q(req.lockDir)] : []),
        ...(req.stateFlag ? ['--state', q(req.stateFlag)] : []),
        '--resume',
        runId,
      ];
      const inline = req.sources.some((s) => s.kind === 'inline' && Object.keys(s.vars).length > 0);
      const n = left.length;
      return `tsbm: ${n} host${n === 1 ? '' : 's'} unfinished (${left.sort().slice(0, 5).join(', ')}${n > 5 ? ', ...' : ''}); continue with: ${args.join(' ')}${inline ? ' -e ... (your inline -e values again)' : ''}\n`;
    },
  };
}
