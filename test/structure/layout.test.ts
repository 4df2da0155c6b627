/**
 * The layout rules of the source tree, checked on the files themselves: no hand-written file
 * outside the tests over 400 lines, no import circle anywhere (type-only and dynamic imports
 * count: they tie the files together for a reader all the same), and no task state typed by
 * hand into the engine's SQL, where the edge table supplies it
 * (packages/engine/src/db/task-states.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { taskStates } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const packagesRoot = join(root, 'packages');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = readdirSync(packagesRoot).flatMap((name) =>
  sourceFiles(join(packagesRoot, name, 'src')),
);
/** Every hand-written TypeScript file of the repository, for the import circles. */
const allFiles = [
  ...files,
  ...['bench', 'examples', 'scripts', 'test'].flatMap((directory) =>
    sourceFiles(join(root, directory)),
  ),
];
const display = (path: string) => (path.startsWith(root) ? relative(root, path) : path);

/** Relative imports, re-exports and dynamic imports of a file, resolved to files. */
function importsOf(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const specifiers = [
    ...text.matchAll(/^(?:import|export)[^;]*?from\s+'(\.[^']+)'/gms),
    ...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g),
  ].map((match) => match[1] as string);
  return specifiers.map((specifier) => {
    const target = resolve(dirname(path), specifier).replace(/\.(?:js|ts)$/, '');
    return allFiles.includes(`${target}.ts`) ? `${target}.ts` : join(target, 'index.ts');
  });
}

describe('the source tree', () => {
  it('has no hand-written file in packages/*/src, the bench, the examples or the scripts over 400 lines', () => {
    expect(files.length).toBeGreaterThan(50);
    const long = allFiles
      .filter((path) => !path.startsWith(join(root, 'test')))
      .map((path) => ({
        path: display(path),
        lines: readFileSync(path, 'utf8').split('\n').length,
      }))
      .filter((file) => file.lines > 400);
    expect(long).toEqual([]);
  });

  it('has no import circle, in the packages, the bench, the examples, the scripts or the tests', () => {
    expect(allFiles.length).toBeGreaterThan(files.length + 100);
    expect(circlesIn(new Map(allFiles.map((path) => [path, importsOf(path)])))).toEqual([]);
  });

  it('would see a circle and a state typed into SQL (the checks themselves)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(circlesIn(graph)).toEqual(['a.ts → b.ts → c.ts → a.ts']);
    const statement = "sql`update causeway_tasks set state = 'queued' where state = $1`";
    expect(statesTypedInSql(statement)).toEqual(["'queued'"]);
    expect(statesTypedInSql("sql`update causeway_outbox set state = 'pending'`")).toEqual([]);
  });

  it('types no task state into the engine SQL by hand', () => {
    const found = files
      .filter((file) => file.includes('/engine/src/db/'))
      .flatMap((path) =>
        statesTypedInSql(readFileSync(path, 'utf8')).map(
          (literal) => `${display(path)}: ${literal}`,
        ),
      );
    expect(found).toEqual([]);
  });
});

/** Every circle of an import graph, as `a → b → a`. */
function circlesIn(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') {
        circles.push([...stack.slice(stack.indexOf(next)), next].map(display).join(' → '));
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return circles;
}

/**
 * Task states quoted inside the `sql` templates of a source text. The outbox has states of its
 * own: a `pending` in a statement on `causeway_outbox` is the outbox's.
 */
function statesTypedInSql(text: string): string[] {
  const quoted = new RegExp(`'(${taskStates.join('|')})'`, 'g');
  return [...text.matchAll(/sql(?:<[^`]*?>)?`([^`]*)`/gs)].flatMap((template) => {
    const body = template[1] as string;
    return [...body.matchAll(quoted)]
      .filter((literal) => !(literal[1] === 'pending' && body.includes('causeway_outbox')))
      .map((literal) => literal[0]);
  });
}
