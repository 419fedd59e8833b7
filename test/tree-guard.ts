// vitest globalSetup: the test run must leave the work tree as it found it. It records what
// `git status` says before the tests and fails the run if any tracked file changed state
// during it (a test that rewrites a committed fixture, table or snapshot).
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

function trackedChanges(): Set<string> | undefined {
  try {
    const out = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' });
    return new Set(out.split('\n').filter(Boolean));
  } catch {
    return undefined; // not a git checkout (an unpacked tarball): nothing to guard
  }
}

export default function setup(): () => void {
  const before = trackedChanges();
  return () => {
    const after = trackedChanges();
    if (!before || !after) return;
    const changed = [...after].filter((l) => !before.has(l));
    if (changed.length > 0) {
      // A throw here is only logged by vitest; the exit code is what CI sees.
      console.error(`the test run changed files git tracks (tests must write elsewhere):\n${changed.join('\n')}`);
      process.exitCode = 1;
    }
  };
}
