// Every test file gets its own node lock directory: the default one is per controller
// (~/.local/state/tsbm/locks, /var/lib/tsbm/locks as root), shared by every test file running
// at once and by anyone else's runs on this machine. Tests of the default pass their own env.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-test-locks-'));
process.env.TSBM_LOCK_DIR = dir;
afterAll(() => rmSync(dir, { recursive: true, force: true }));
