import { defineConfig } from 'vitest/config';
import base from './vitest.config';

// `pnpm test:reliability`: the long fault scenarios (RELIABILITY.md), one file at a time so
// each has the machine's two cores to itself. The short versions run in `pnpm test`.
// (Not mergeConfig: it would concatenate the include and exclude lists.)
export default defineConfig({
  resolve: base.resolve,
  test: {
    include: ['test/reliability/long/**/*.test.ts'],
    globalSetup: base.test?.globalSetup,
    fileParallelism: false,
    testTimeout: 20 * 60_000,
    hookTimeout: 5 * 60_000,
    reporters: base.test?.reporters,
  },
});
