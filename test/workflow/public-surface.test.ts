/**
 * `@causeway/workflow` exports what a user writes workflows with, nothing more (docs/rules.md,
 * "Public surfaces"); the engine, the API and the CLI take the internals from
 * `@causeway/workflow/internal`. The lists below pin the public names: adding one is a
 * deliberate change to this file, and so to the contract. No database.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as publicEntry from '@causeway/workflow';
import * as internalEntry from '@causeway/workflow/internal';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const packageDir = join(root, 'packages/workflow');

const publicValues = [
  'DefinitionError',
  'StepError',
  'attemptOutcomes',
  'awaitReceipt',
  'blockerCodes',
  'catchUpModes',
  'defineWorkflow',
  'describeWorkflow',
  'errorCategories',
  'event',
  'explain',
  'map',
  'nonRetryableErrorCategories',
  'payloadRef',
  'payloadReference',
  'rateLimit',
  'reasonCodes',
  'schedule',
  'send',
  'snooze',
  'startChild',
  'startChildren',
  'step',
  'taskStates',
  'terminalTaskStates',
  'terminalWorkflowStates',
  'transientErrorCategories',
  'workflow',
  'workflowMermaid',
  'workflowStates',
];

const publicTypes = [
  'AttemptOutcome',
  'AttributeValue',
  'AwaitReceipt',
  'BackoffPolicy',
  'Blocker',
  'BlockerCode',
  'BuilderStepOptions',
  'CatchUp',
  'ChildOutcome',
  'ConcurrencyKey',
  'ConcurrencyKeyContext',
  'Debounce',
  'DeepReadonly',
  'ErrorCategory',
  'EventKeyContext',
  'EventStepOptions',
  'Explanation',
  'ExplanationNote',
  'MapContext',
  'PayloadReference',
  'RateLimit',
  'ReasonCode',
  'RetryPolicy',
  'ScheduleDefinition',
  'ScheduleOptions',
  'SendRequest',
  'SnoozeRequest',
  'StaleResult',
  'StartChildrenOptions',
  'StepContext',
  'StepDefinition',
  'StepLogger',
  'StepOptions',
  'StepRateLimit',
  'StepReturn',
  'StoredJson',
  'TaskAttempt',
  'TaskRate',
  'TaskState',
  'Tolerance',
  'Transition',
  'TypedStepContext',
  'TypedStepDefinition',
  'UpstreamResult',
  'WorkflowAttributes',
  'WorkflowBuilder',
  'WorkflowDefinition',
  'WorkflowHeader',
  'WorkflowOptions',
  'WorkflowState',
  'WorkflowStep',
  'WorkflowStepDefinition',
];

/** Code-point order, as a plain sort gives, whatever the locale. */
const sorted = (names: Iterable<string>) => [...names].sort();

const entryFile = (entry: string) => join(packageDir, 'src', `${entry}.ts`);

/** One program over both entries: building one takes seconds. */
const program = ts.createProgram([entryFile('index'), entryFile('internal')], {
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  target: ts.ScriptTarget.ES2023,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
});

/** Every name, value or type, that a TypeScript consumer of `src/<entry>.ts` can import. */
function declaredExports(entry: string): string[] {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entryFile(entry));
  const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  if (module === undefined) throw new Error(`${entryFile(entry)} is not a module`);
  return sorted(checker.getExportsOfModule(module).map((symbol) => symbol.name));
}

describe('the public entry, @causeway/workflow', () => {
  it('exports exactly the public values, at run time', () => {
    expect(sorted(Object.keys(publicEntry))).toEqual(publicValues);
  });

  it('declares exactly the public values and types', () => {
    expect(declaredExports('index')).toEqual(sorted([...publicValues, ...publicTypes]));
  });

  it('names every function and class the rules and the README show from it', () => {
    const rules = readFileSync(join(root, 'docs/rules.md'), 'utf8');
    const bullet = rules.match(/^- `@causeway\/workflow`:[\s\S]*?(?=^- )/m)?.[0] ?? '';
    // `run(ctx)` is the step's own function, the one call there that is not an export.
    const called = [...bullet.matchAll(/`(?:new )?([A-Za-z]+)\(/g)]
      .map((match) => match[1])
      .filter((name) => name !== 'run');
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const imported = [...readme.matchAll(/import \{([^}]*)\} from '@causeway\/workflow'/g)]
      .flatMap((match) => (match[1] ?? '').split(','))
      .map((name) => name.replace(/^\s*type\s+/, '').trim())
      .filter((name) => name !== '');
    expect(called).toEqual(expect.arrayContaining(['defineWorkflow', 'step', 'StepError']));
    expect(imported).toEqual(expect.arrayContaining(['defineWorkflow', 'workflow', 'schedule']));
    const known = new Set([...publicValues, ...publicTypes]);
    expect([...called, ...imported].filter((name) => !known.has(name as string))).toEqual([]);
  });
});

describe('the internal entry, @causeway/workflow/internal', () => {
  const internalOnly = Object.keys(internalEntry).filter((name) => !publicValues.includes(name));

  it("holds the machine's internals, none of them reachable from the public entry", () => {
    expect(internalOnly).toEqual(
      expect.arrayContaining(['choose', 'dead', 'refuse', 'decideTaskEdge', 'checkAdmission']),
    );
    for (const name of internalOnly) expect(Object.hasOwn(publicEntry, name)).toBe(false);
    const publicDeclared = new Set(declaredExports('index'));
    const internalTypes = declaredExports('internal').filter(
      (name) => !publicDeclared.has(name) && !Object.hasOwn(internalEntry, name),
    );
    expect(internalTypes).toEqual(expect.arrayContaining(['Choice', 'TaskEdge', 'RunTask']));
  });

  it('includes the public entry: the same functions and classes, not copies', () => {
    const entries = internalEntry as Record<string, unknown>;
    for (const name of publicValues) {
      expect(entries[name]).toBe((publicEntry as Record<string, unknown>)[name]);
    }
  });

  it('is not what the examples, written as a user would, import', () => {
    const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
    });
    const examples = listed.split('\n').filter((path) => /^examples\/.*\.(ts|mjs|js)$/.test(path));
    expect(examples.length).toBeGreaterThan(0);
    const internalUsers = examples.filter((path) =>
      readFileSync(join(root, path), 'utf8').includes('@causeway/workflow/internal'),
    );
    expect(internalUsers).toEqual([]);
  });

  it('and nothing else of the package is importable: the exports map has these two entries', () => {
    const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
      exports: Record<string, string>;
      publishConfig: { exports: Record<string, { types: string; import: string }> };
    };
    expect(manifest.exports).toEqual({ '.': './src/index.ts', './internal': './src/internal.ts' });
    expect(manifest.publishConfig.exports).toEqual({
      '.': { types: './dist/types/index.d.ts', import: './dist/index.js' },
      './internal': { types: './dist/types/internal.d.ts', import: './dist/internal.js' },
    });
    const require = createRequire(join(root, 'package.json'));
    expect(require.resolve('@causeway/workflow/internal')).toBe(
      join(packageDir, 'src/internal.ts'),
    );
    expect(() => require.resolve('@causeway/workflow/src/machine-choice.ts')).toThrow(
      expect.objectContaining({ code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' }),
    );
  });
});
