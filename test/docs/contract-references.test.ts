/**
 * The repository carries its own contract (docs/rules.md, docs/state-machine.md). This test
 * fails when a file cites a rule id that is not a heading of docs/rules.md, links to a heading
 * of docs/ that does not exist, or refers to a specification or folder outside the repository.
 * Plain file reads, no database.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

const textExtensions = ['.ts', '.md', '.json', '.mjs', '.sql', '.graphql', '.yaml'];
// Generated files: the lockfile.
const skippedPaths = new Set(['pnpm-lock.yaml']);

/**
 * Every project file this test reads, relative to the repository root: what git tracks or
 * would track (untracked files that .gitignore does not exclude), so dependencies, build
 * output and local data are never read.
 */
function projectFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  return listed
    .split('\n')
    .filter((path) => path !== '' && !skippedPaths.has(path) && existsSync(join(root, path)))
    .filter((path) => path.startsWith('.ci/') || textExtensions.some((ext) => path.endsWith(ext)))
    .sort();
}

const files = projectFiles();
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** Each match of `pattern` (global) in `path`, with where it is as `path:line`. */
function occurrences(path: string, pattern: RegExp): { where: string; match: RegExpMatchArray }[] {
  return read(path)
    .split('\n')
    .flatMap((line, index) =>
      [...line.matchAll(pattern)].map((match) => ({ where: `${path}:${index + 1}`, match })),
    );
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces become hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

const rulesDoc = read('docs/rules.md');
const ruleHeadings = [...rulesDoc.matchAll(/^### (R\d+) — \S.*$/gm)].map((match) => match[1] ?? '');

describe('docs/rules.md', () => {
  it('has one heading per rule, R1 to R42 without a gap, then each id once and in order', () => {
    const numbers = ruleHeadings.map((id) => Number(id.slice(1)));
    expect(numbers.slice(0, 42)).toEqual(numbers.slice(0, 42).map((_, index) => index + 1));
    expect(numbers.length).toBeGreaterThanOrEqual(42);
    for (let index = 1; index < numbers.length; index += 1) {
      expect(
        numbers[index],
        `${ruleHeadings[index]} after ${ruleHeadings[index - 1]}`,
      ).toBeGreaterThan(numbers[index - 1] ?? 0);
    }
  });
});

describe('contract references', () => {
  it('cites only rule ids that are headings of docs/rules.md', () => {
    const known = new Set(ruleHeadings);
    const unknown = files
      .filter((path) => path.endsWith('.ts') || path.endsWith('.md'))
      .flatMap((path) => occurrences(path, /\bR\d+\b/g))
      .filter(({ match }) => !known.has(match[0]))
      .map(({ where, match }) => `${where}: ${match[0]}`);
    expect(unknown, 'rule ids missing from docs/rules.md').toEqual([]);
  });

  it('links only to headings that exist in docs/', () => {
    // [text](docs/rules.md#anchor), [text](../../docs/rules.md#anchor), or from docs/ itself
    // [text](rules.md#anchor).
    const link = /\]\(([^)\s#]*docs\/)?([\w-]+\.md)#([^)\s]+)\)/g;
    const broken = files
      .filter((path) => path.endsWith('.md'))
      .flatMap((path) =>
        occurrences(path, link).filter(({ match }) => {
          const [, prefix, target, anchor] = match;
          if (prefix === undefined && !path.startsWith('docs/')) return false;
          const anchors = read(`docs/${target}`)
            .split('\n')
            .filter((line) => /^#+ /.test(line))
            .map((line) => anchorOf(line.replace(/^#+ /, '')));
          return !anchors.includes(anchor as string);
        }),
      )
      .map(({ where, match }) => `${where}: ${match[0]}`);
    expect(broken, 'links to headings that do not exist').toEqual([]);
  });

  it('never refers to a specification or folder outside the repository', () => {
    // Built from pieces so that this file does not match its own patterns.
    const outside = [
      ['..', '/shared'],
      ['shared/', 'SPEC'],
      ['SPEC', '.md'],
      ['SPEC', ' §'],
      ['seeds', '/'],
      ['/work', '/shared'],
    ].map((parts) => parts.join(''));
    const offenders = files.flatMap((path) =>
      read(path)
        .split('\n')
        .flatMap((line, index) =>
          outside
            .filter((pattern) => line.includes(pattern))
            .map((pattern) => `${path}:${index + 1}: ${pattern}`),
        ),
    );
    expect(offenders, 'references to files outside the repository').toEqual([]);
  });
});
