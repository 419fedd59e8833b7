// A cancelled CI job: SIGTERM mid-deploy. The runner stops scheduling, lets running tasks end,
// ends the nodes it left unfinished safe (powered off, media ejected, read back), records the end
// of the run and releases its locks (exit 99); `--resume last` then finishes the deploy: a node
// that ended safe deploys again from the start (its ramdisk and what it held are gone), a node
// that had finished is not touched again.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJournal } from '../../src/journal/reader.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { DEPLOY, runTsbm, spawnTsbm, stateArgs, locksLeft } from '../helpers/fault-cli.js';
import { flushFaultRows, tryFault } from '../helpers/fault-table.js';

const SOURCE = 'resume-sigterm';
let lab: Lab | undefined;
let dir = '';
afterAll(async () => {
  await lab?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  flushFaultRows(SOURCE);
});

describe('SIGTERM mid-deploy, then --resume last', () => {
  it('stops cleanly (exit 99, run end recorded, locks released) and the resume finishes every node', async () => {
    await tryFault(
      SOURCE,
      { fault: 'CI job cancelled (SIGTERM) mid-deploy', how: '3-node sim deploy, SIGTERM once the first install started, then --resume last', cases: 1, outcome: 'exit 99 with run_end in the journal and no locks; the unfinished nodes ended Off with no media; resume deployed all nodes, again from the start only those it had ended safe' },
      async () => {
        dir = mkdtempSync(join(tmpdir(), 'tsbm-sigterm-'));
        lab = await startLab({ nodes: 3, dir, bootDelayMs: 150, powerDelayMs: 30 });
        const state = stateArgs(dir);
        const args = ['run', DEPLOY, '-i', lab.inventory, '--output', 'json', ...state.args];
        const first = spawnTsbm(args, { cwd: dir, env: state.env });
        // Terminate once an install is under way: work is in flight on every node.
        let sent = false;
        let seen = '';
        first.child.stdout!.on('data', (d: string) => {
          seen = (seen + d).slice(-4096); // a match may straddle two chunks
          if (!sent && seen.includes('"Install the image to the root disk"')) {
            sent = true;
            first.child.kill('SIGTERM');
          }
        });
        const r1 = await first.done;
        expect(sent).toBe(true);
        expect(r1.code, r1.stderr).toBe(99);
        expect(r1.stderr).not.toMatch(/\n\s+at /);
        expect(locksLeft(join(dir, 'locks'))).toEqual([]);
        const [journal] = readdirSync(join(dir, 'runs'));
        expect(readJournal(join(dir, 'runs', journal!)).records.some((x) => x.type === 'run_end')).toBe(true);
        // Every node the run left unfinished ended safe, read back from its BMC.
        const recap = r1.events.find((e) => e.type === 'recap') as unknown as { hosts: Record<string, { outcome: string; node?: { state: string; power?: string; media?: string } }> };
        const left = Object.keys(recap.hosts).filter((h) => recap.hosts[h]!.outcome === 'unfinished');
        expect(left.length).toBeGreaterThan(0);
        for (const h of left) {
          expect(recap.hosts[h]!.node, h).toMatchObject({ state: 'deploy failed', power: 'Off', media: 'ejected' });
          const st = await lab.nodes.find((n) => n.cfg.name === h)!.status();
          expect([st.power, st.media], h).toEqual(['Off', '']);
        }

        const r2 = await runTsbm([...args, '--resume', 'last'], { cwd: dir, env: state.env });
        expect(r2.code, r2.stderr).toBe(0);
        for (const n of lab.nodes) {
          expect((await n.diskLayout()).partitions.map((p) => p.name), n.cfg.name).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
          // The terminated run let running installs finish (none was cut); a node it ended safe
          // is installed again by the resume, a node that had finished is not.
          const installs = Number(readFileSync(join(n.root, 'sim/bootc-count'), 'utf8').trim());
          expect(installs, n.cfg.name).toBeLessThanOrEqual(left.includes(n.cfg.name) ? 2 : 1);
          expect(installs, n.cfg.name).toBeGreaterThanOrEqual(1);
          expect((await n.status()).power, n.cfg.name).toBe('On');
        }
        expect(locksLeft(join(dir, 'locks'))).toEqual([]);
      },
    );
  }, 180_000);
});
