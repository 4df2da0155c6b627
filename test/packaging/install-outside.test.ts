/**
 * The packages as a user gets them: `pnpm run pack:all` builds and packs the tarballs, an
 * application in a temp folder outside the workspace installs them with npm, then
 * - runs `fixtures/app.mjs` on plain Node (no tsx, no loader): a two-step workflow on this
 *   file's database, the GraphQL API asked about it, the installed `causeway` bin too, and
 *   the two entries of `@causeway/workflow` (`.` and `./internal`);
 * - type-checks `fixtures/app.ts` with `tsc --noEmit`, moduleResolution nodenext.
 * It needs the npm registry (npm install) and takes about a minute.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const packageNames = ['@causeway/workflow', '@causeway/engine', '@causeway/api'] as const;

interface Manifest {
  name: string;
  version: string;
  devDependencies?: Record<string, string>;
}

async function manifest(folder: string): Promise<Manifest> {
  return JSON.parse(await readFile(join(folder, 'package.json'), 'utf8')) as Manifest;
}

/**
 * A child's environment outside the workspace: without the `npm_*`/`pnpm_*` settings that
 * `pnpm test` passes down (npm would read them as its config), loaders or NODE_PATH.
 */
function outsideEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm|pnpm)_/i.test(key) || /^VITEST/.test(key)) continue;
    if (['NODE_OPTIONS', 'NODE_PATH', 'NODE_ENV'].includes(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

const db = useTestDatabase();
let app = '';

beforeAll(async () => {
  await run('pnpm', ['run', 'pack:all'], { cwd: repoRoot, timeout: 240_000 });

  app = await realpath(await mkdtemp(join(tmpdir(), 'causeway-app-')));
  expect(relative(repoRoot, app).startsWith('..')).toBe(true); // really outside
  const root = await manifest(repoRoot);
  const pinned = (name: string): string => {
    const version = root.devDependencies?.[name];
    if (version === undefined) throw new Error(`the root package.json does not pin ${name}`);
    return version;
  };
  const tarballs: Record<string, string> = {};
  for (const folder of ['workflow', 'engine', 'api', 'cli']) {
    const { name, version } = await manifest(join(repoRoot, 'packages', folder));
    const file = join(
      repoRoot,
      '.packs',
      `${name.replace('@', '').replace('/', '-')}-${version}.tgz`,
    );
    tarballs[name] = `file:${file}`;
  }
  const appManifest = {
    name: 'causeway-outside-app',
    private: true,
    type: 'module',
    dependencies: { ...tarballs, pino: pinned('pino'), zod: pinned('zod') },
    devDependencies: { '@types/node': pinned('@types/node') },
  };
  await writeFile(join(app, 'package.json'), `${JSON.stringify(appManifest, null, 2)}\n`);
  await writeFile(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
      },
      files: ['app.ts'],
    }),
  );
  for (const file of ['app.mjs', 'app.ts']) await copyFile(join(fixtures, file), join(app, file));

  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--include=dev'], {
    cwd: app,
    env: outsideEnv(),
    timeout: 240_000,
  });
}, 600_000);

afterAll(async () => {
  if (app !== '') await rm(app, { recursive: true, force: true });
});

describe('the packed packages, installed outside the workspace', () => {
  it('run a two-step workflow and the API on plain Node', async () => {
    const { stdout } = await run(process.execPath, ['app.mjs'], {
      cwd: app,
      env: outsideEnv({ DATABASE_URL: db().url }),
      timeout: 90_000,
    });
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '');

    expect(result.resolved).toEqual(
      packageNames.map(
        (name) => pathToFileURL(join(app, 'node_modules', name, 'dist/index.js')).href,
      ),
    );
    // The migrations were found next to the bundle: all of them, in order.
    const sql = await readdir(join(repoRoot, 'packages/engine/src/migrations'));
    const migrations = sql.filter((file) => file.endsWith('.sql')).sort();
    expect(migrations.length).toBeGreaterThan(0);
    expect(result.migrations).toEqual(migrations.map((file) => file.replace(/\.sql$/, '')));
    expect(result.workflowEntries).toEqual({
      internal: pathToFileURL(join(app, 'node_modules/@causeway/workflow/dist/internal.js')).href,
      publicHasMachine: false,
      internalHasMachine: 'function',
      classified: 'unauthorized',
    });

    expect(result.state).toBe('succeeded');
    expect(result.tasks).toEqual([
      {
        step: 'compose',
        state: 'succeeded',
        output: { text: 'hello outside' },
        transitions: ['queued:submitted', 'leased:lease_acquired', 'succeeded:completed'],
      },
      {
        step: 'deliver',
        state: 'succeeded',
        output: { delivered: 'hello outside' },
        transitions: [
          'pending:submitted',
          'queued:upstream_succeeded',
          'leased:lease_acquired',
          'succeeded:completed',
        ],
      },
    ]);
    expect(result.cli).toEqual({
      exitCode: 0,
      state: 'SUCCEEDED',
      steps: ['compose:SUCCEEDED', 'deliver:SUCCEEDED'],
    });
    expect(result.api).toEqual({
      createApiServer: 'function',
      queryType: 'Query',
      status: 200,
      graphql: {
        data: {
          workflow: {
            state: 'SUCCEEDED',
            tasks: [
              { step: 'compose', state: 'SUCCEEDED' },
              { step: 'deliver', state: 'SUCCEEDED' },
            ],
          },
        },
      },
      dashboard: [
        { status: 200, type: 'text/html; charset=utf-8', size: true },
        { status: 200, type: 'text/javascript; charset=utf-8', size: true },
      ],
    });
  }, 120_000);

  it('type-check in a consumer with moduleResolution nodenext', async () => {
    const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
    // skipLibCheck is off so that Causeway's own declarations are checked too. Some of
    // graphql-yoga's dependencies' typings want newer libs than Node 20's (URLPattern,
    // DisposableStack), so tsc exits non-zero for files that are not ours: those are left out.
    const output = await run(
      process.execPath,
      [tsc, '-p', 'tsconfig.json', '--pretty', 'false', '--listFiles'],
      { cwd: app, env: outsideEnv(), timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
    ).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string }) => {
        if (typeof error.stdout !== 'string' || error.stdout === '') throw error;
        return error.stdout;
      },
    );
    const lines = output.split('\n');
    const theirs = (line: string) =>
      line.startsWith('node_modules/') && !line.startsWith('node_modules/@causeway/');
    const ours = lines.filter((line) => /error TS\d+:/.test(line) && !theirs(line));
    expect(ours).toEqual([]);
    // The declarations tsc read are the installed tarballs' (app.ts's @ts-expect-error lines
    // fail the check if they resolved to `any`).
    for (const name of packageNames) {
      expect(lines).toContain(join(app, 'node_modules', name, 'dist/types/index.d.ts'));
    }
    expect(lines).toContain(join(app, 'node_modules/@causeway/workflow/dist/types/internal.d.ts'));
  }, 150_000);
});
