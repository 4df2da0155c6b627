import { defineConfig } from 'vitest/config';

// When set (CI does), vitest also writes a JSON report there; `pnpm test` stays unchanged.
const jsonReportFile = process.env.CAUSEWAY_TEST_REPORT;

export default defineConfig({
  resolve: {
    // graphql 16 has no "exports" map: Node (and so graphql-yoga, which Node loads) gets its
    // CommonJS build, while Vite would give transformed code the ESM build ("module"). Two
    // copies of graphql break its instanceof checks, so transformed code gets the same file.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The long reliability scenarios run under `pnpm test:reliability` (vitest.reliability.config.ts);
    // each has a short version in test/reliability/ that runs here.
    exclude: ['**/node_modules/**', 'test/reliability/long/**'],
    // One PostgreSQL server per run (embedded unless DATABASE_URL is set).
    globalSetup: ['test/helpers/global-setup.ts'],
    // Tests hit a real database; waitFor() defaults to 5 s so its clearer error comes first.
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: jsonReportFile ? ['default', ['json', { outputFile: jsonReportFile }]] : ['default'],
  },
});
