import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/tree-guard.ts'],
    // A private node lock directory per test file (test/helpers/lock-dir-setup.ts).
    setupFiles: ['test/helpers/lock-dir-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // e2e tests share network namespaces, loop devices and a registry: run files one at a time there.
    fileParallelism: true,
    pool: 'forks',
  },
});
