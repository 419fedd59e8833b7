import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { CI_SKIPS } from './test/ci-skips.js';
import { SkipGuard } from './test/skip-guard.js';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  // Tests run tsbm and the lab package (packages/lab) from their sources, as one program: the
  // lab's `tsbm/lib/...` imports and tsbm's `@tsbm/lab` load the same files the tests import.
  resolve: {
    alias: [
      { find: /^tsbm\/lib\/(.*)\.js$/, replacement: `${here('./src/')}$1.ts` },
      { find: /^@tsbm\/lab$/, replacement: here('./packages/lab/src/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/tree-guard.ts'],
    // Under CI=true a skipped test fails the run unless test/ci-skips.ts allows it, with the reason.
    reporters: ['default', new SkipGuard(CI_SKIPS)],
    // A private node lock directory per test file (test/helpers/lock-dir-setup.ts).
    setupFiles: ['test/helpers/lock-dir-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // e2e tests share network namespaces, loop devices and a registry: run files one at a time there.
    fileParallelism: true,
    pool: 'forks',
  },
});
