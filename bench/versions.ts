import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** Installed version of a package, read from the repository's node_modules. */
export function packageVersion(name: string): string {
  const file = fileURLToPath(new URL(`../node_modules/${name}/package.json`, import.meta.url));
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/**
 * A digest of the engine's and the domain's source (packages/engine/src, packages/workflow/src):
 * names exactly the code measured, committed or not, with or without git.
 */
export function sourceDigest(): string {
  const hash = createHash('sha1');
  for (const dir of ['packages/engine/src', 'packages/workflow/src']) {
    const root = join(repoRoot, dir);
    const files = readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name))
      .sort();
    for (const file of files) hash.update(relative(repoRoot, file)).update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 10);
}

let measured: string | undefined;

/** What is measured: the git commit (if any) and the source digest, taken once per process. */
export function engineRevision(): string {
  measured ??= `${gitHead()}, source ${sourceDigest()}`;
  return measured;
}

function gitHead(): string {
  try {
    const run = (args: string[]) =>
      execFileSync('git', args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    const head = run(['rev-parse', '--short', 'HEAD']);
    const dirty = run(['status', '--porcelain', '--', 'packages']) !== '';
    return dirty ? `${head} with uncommitted changes` : head;
  } catch {
    return 'no git';
  }
}
