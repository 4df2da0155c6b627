/**
 * `pnpm run build` / `pnpm run pack:all`: builds every `packages/*` to `dist/` (and, with
 * `--pack <folder>`, packs each with `pnpm pack` into that folder).
 *
 * Why this shape: the sources import each other extensionless (`./actors`), which Node's ESM
 * loader refuses, so a plain `tsc` emit would not run. esbuild (already in the tree for tsx)
 * bundles each package's `src/index.ts` into one ESM `dist/index.js` for Node 20 (and a
 * `src/bin.ts`, an executable such as `causeway`, into `dist/bin.js`), every bare import
 * (dependencies, the other `@causeway/*` packages, `node:` builtins) left external. A package
 * with a second entry point, `src/internal.ts` (`@causeway/workflow/internal`), gets
 * `dist/internal.js` from the same build, the modules both entries share in one chunk beside
 * them: two bundles would each carry their own copy of a class such as `StepError`,
 * and `instanceof` would tell a user's error from the engine's.
 * Declarations come from tsc (see declarations.ts). The workspace itself keeps running from
 * source: package.json `exports` point at `src/index.ts`, and `publishConfig` swaps in `dist/`
 * when pnpm packs.
 *
 * Files the code reads at run time are referenced as `new URL('<literal>', import.meta.url)`
 * (the migrations folder, `schema.graphql`). The bundle lives elsewhere than its source file,
 * so the build relocates each such reference, the way bundlers treat asset URLs: it copies
 * the target into `dist/` (a target inside `src/` keeps its path relative to `src/`, one
 * outside the package goes to `dist/<name>`) and rewrites the literal relative to
 * `dist/index.js`. Any other use of `import.meta.url` fails the build rather than break in
 * the bundle.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { emitDeclarations, libraryEntries } from './declarations';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const packagesRoot = join(repoRoot, 'packages');

interface PackageToBuild {
  readonly name: string;
  readonly dir: string;
}

function workspacePackages(): PackageToBuild[] {
  return readdirSync(packagesRoot, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(packagesRoot, entry.name, 'src')))
    .map((entry) => {
      const dir = join(packagesRoot, entry.name);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name: string;
      };
      return { name: manifest.name, dir };
    });
}

const assetReference = /new URL\(\s*(['"])([^'"\n]+)\1\s*,\s*import\.meta\.url\s*\)/g;

/** esbuild plugin: relocates `new URL('<literal>', import.meta.url)` targets into `dist/`. */
function relocateAssets(pkg: PackageToBuild): esbuild.Plugin {
  const src = join(pkg.dir, 'src');
  const dist = join(pkg.dir, 'dist');
  const copied = new Map<string, string>(); // dist path → source path
  return {
    name: 'causeway-relocate-assets',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        const rewritten = text.replace(assetReference, (_match, quote: string, url: string) => {
          const target = resolve(dirname(args.path), url);
          if (!existsSync(target)) throw new Error(`${args.path}: '${url}' does not exist`);
          const inside = `${target}${sep}`.startsWith(`${src}${sep}`);
          const destination = inside ? relative(src, target) : basename(target);
          const previous = copied.get(destination);
          if (previous !== undefined && previous !== target) {
            throw new Error(
              `${args.path}: '${url}' and ${previous} both map to dist/${destination}`,
            );
          }
          copied.set(destination, target);
          cpSync(target, join(dist, destination), { recursive: true });
          const slash = url.endsWith('/') ? '/' : '';
          return `new URL(${quote}./${destination.split(sep).join('/')}${slash}${quote}, import.meta.url)`;
        });
        if (rewritten.replace(assetReference, '').includes('import.meta.url')) {
          throw new Error(
            `${args.path}: only new URL('<literal>', import.meta.url) survives bundling; ` +
              'teach scripts/build-packages.ts any other use of import.meta.url',
          );
        }
        return { contents: rewritten, loader: 'ts' };
      });
    },
  };
}

/**
 * The library entries in one build (shared modules split into chunks), then `src/bin.ts`
 * where a package has an executable (its `publishConfig.bin`).
 */
async function bundle(pkg: PackageToBuild): Promise<void> {
  const common: esbuild.BuildOptions = {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
    plugins: [relocateAssets(pkg)],
  };
  const entries = libraryEntries(pkg.dir);
  await esbuild.build({
    ...common,
    entryPoints: Object.fromEntries(
      entries.map((entry) => [entry, join(pkg.dir, 'src', `${entry}.ts`)]),
    ),
    outdir: join(pkg.dir, 'dist'),
    // Chunks sit beside the entries, so an asset URL relocated for `dist/index.js` holds in them.
    splitting: entries.length > 1,
  });
  if (existsSync(join(pkg.dir, 'src', 'bin.ts'))) {
    await esbuild.build({
      ...common,
      entryPoints: [join(pkg.dir, 'src', 'bin.ts')],
      outfile: join(pkg.dir, 'dist', 'bin.js'),
      banner: { js: '#!/usr/bin/env node' },
    });
  }
}

function pack(pkg: PackageToBuild, destination: string): string {
  const before = new Set(readdirSync(destination));
  execFileSync('pnpm', ['pack', '--pack-destination', destination], {
    cwd: pkg.dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const created = readdirSync(destination).filter((file) => !before.has(file));
  if (created.length !== 1)
    throw new Error(`pnpm pack of ${pkg.name} made ${created.length} files`);
  return join(destination, created[0] as string);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const packAt = args.indexOf('--pack');
  const packDestination = packAt >= 0 ? args[packAt + 1] : undefined;
  if (packAt >= 0 && packDestination === undefined) throw new Error('--pack needs a folder');

  const started = performance.now();
  const packages = workspacePackages();
  for (const pkg of packages) rmSync(join(pkg.dir, 'dist'), { recursive: true, force: true });
  await Promise.all(packages.map(bundle));
  emitDeclarations(repoRoot, packages);
  console.log(
    `built ${packages.map((pkg) => pkg.name).join(', ')} in ${Math.round(performance.now() - started)} ms`,
  );

  if (packDestination !== undefined) {
    const folder = resolve(repoRoot, packDestination);
    mkdirSync(folder, { recursive: true });
    // Only earlier tarballs go: the folder is the caller's.
    for (const file of readdirSync(folder)) {
      if (file.endsWith('.tgz')) rmSync(join(folder, file));
    }
    for (const pkg of packages) console.log(`packed ${relative(repoRoot, pack(pkg, folder))}`);
  }
}

await main();
