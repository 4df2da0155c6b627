/**
 * R54 at definition load: a definition's version is its declared `version` or a digest of its
 * shape; bad versions and two definitions of one name and version are refused with their codes;
 * a registry serves several versions of a name, the last listed being the latest.
 */
import { createHash } from 'node:crypto';
import { workflow } from '@causeway/workflow';
import {
  defineWorkflow,
  definitionAt,
  maxVersionLength,
  sha256Hex,
  shapeDigest,
  step,
  versionStatus,
  withMapChildren,
  workflowRegistry,
  workflowVersion,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definitionError } from './definition-errors';

const input = z.object({ id: z.string() });

/** render → review → publish, with the queue and `after` of each step given. */
function publishing(options: { readonly version?: string; readonly renderQueue?: string } = {}) {
  return defineWorkflow({
    name: 'publishing',
    input,
    ...(options.version === undefined ? {} : { version: options.version }),
    steps: {
      render: step({ queue: options.renderQueue ?? 'cpu', run: () => 'html' }),
      review: step({ after: ['render'], run: () => 'ok' }),
      publish: step({ after: ['review'], queue: 'network', run: () => 'done' }),
    },
  });
}

describe('sha256Hex', () => {
  it('gives the standard digests', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('agrees with node:crypto on any text, multi-block and non-ASCII included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
      }),
      { numRuns: 300 },
    );
  });
});

describe('the version a definition records', () => {
  it('is the digest of its shape without a version: canonical JSON of the steps, SHA-256, 12 hex digits', () => {
    const shape = JSON.stringify([
      ['render', 'run', [], 'cpu'],
      ['review', 'run', ['render'], 'default'],
      ['publish', 'run', ['review'], 'network'],
    ]);
    const expected = createHash('sha256').update(shape).digest('hex').slice(0, 12);
    expect(workflowVersion(publishing())).toBe(expected);
    expect(publishing().version).toBeUndefined();
  });

  it('is the same for the same shape, whatever the code of its steps or the order they are declared in', () => {
    const reordered = defineWorkflow({
      name: 'publishing',
      input: z.object({ other: z.number() }),
      steps: {
        publish: step({ after: ['review'], queue: 'network', run: () => 'other code' }),
        review: step({ after: ['render'], run: async () => 'also other' }),
        render: step({ queue: 'cpu', run: () => 1 }),
      },
    });
    expect(workflowVersion(reordered)).toBe(workflowVersion(publishing()));
  });

  it('changes with a changed `after`, queue, step name or kind', () => {
    const base = workflowVersion(publishing());
    const otherAfter = defineWorkflow({
      name: 'publishing',
      input,
      steps: {
        render: step({ queue: 'cpu', run: () => 'html' }),
        review: step({ after: ['render'], run: () => 'ok' }),
        publish: step({ after: ['render', 'review'], queue: 'network', run: () => 'done' }),
      },
    });
    const renamed = defineWorkflow({
      name: 'publishing',
      input,
      steps: {
        render: step({ queue: 'cpu', run: () => 'html' }),
        check: step({ after: ['render'], run: () => 'ok' }),
        publish: step({ after: ['check'], queue: 'network', run: () => 'done' }),
      },
    });
    const asEvent = workflow({ name: 'publishing', input })
      .step('render', { queue: 'cpu', run: () => 'html' })
      .event('review', {
        after: ['render'],
        name: 'reviewed',
        key: (ctx) => ctx.input.id,
        timeoutMs: 60_000,
      })
      .step('publish', { after: ['review'], queue: 'network', run: () => 'done' })
      .build();
    const digests = [
      base,
      workflowVersion(otherAfter),
      workflowVersion(publishing({ renderQueue: 'gpu' })),
      workflowVersion(renamed),
      workflowVersion(asEvent),
    ];
    expect(new Set(digests).size).toBe(digests.length);
    for (const digest of digests) expect(digest).toMatch(/^[0-9a-f]{12}$/);
  });

  it('is the declared version when there is one, from defineWorkflow and the builder alike', () => {
    expect(workflowVersion(publishing({ version: 'v3' }))).toBe('v3');
    const built = workflow({ name: 'built', input, version: '2026-12-06' })
      .step('only', { run: () => 1 })
      .build();
    expect(built.version).toBe('2026-12-06');
    expect(workflowVersion(built)).toBe('2026-12-06');
    // A map step's one-step children take their parent's version.
    const parent = workflow({ name: 'fan', input, version: 'v7' })
      .step('list', { run: () => [1, 2] })
      .map('each', { after: ['list'], over: (ctx) => ctx.results.list, run: () => 1 })
      .build();
    const child = withMapChildren([parent]).find((each) => each.name === 'fan/each');
    expect(child === undefined ? null : workflowVersion(child)).toBe('v7');
    expect(shapeDigest(parent)).not.toBe('v7');
  });

  it.each([
    ['', 'version must not be empty'],
    [
      'x'.repeat(maxVersionLength + 1),
      `version must be at most ${maxVersionLength} characters (got ${maxVersionLength + 1})`,
    ],
    ['v\n1', 'version must not hold control characters'],
  ])('refuses %j at definition load with invalid_version', (version, problem) => {
    for (const define of [
      () => publishing({ version }),
      () =>
        workflow({ name: 'built', input, version })
          .step('only', { run: () => 1 })
          .build(),
    ]) {
      const error = definitionError(define);
      expect(error.code).toBe('invalid_version');
      expect(error.problems).toEqual([problem]);
    }
  });

  it('accepts a version of exactly the bound', () => {
    const longest = 'v'.repeat(maxVersionLength);
    expect(workflowVersion(publishing({ version: longest }))).toBe(longest);
  });
});

describe('a registry of several versions', () => {
  const v1 = publishing({ version: 'v1' });
  const v2 = publishing({ version: 'v2' });

  it('gives the last listed by name, each listed by version, and every version in order', () => {
    const registry = workflowRegistry([v1, v2]);
    expect(registry.get('publishing')).toBe(v2);
    expect(registry.at('publishing', 'v1')).toBe(v1);
    expect(registry.at('publishing', 'v2')).toBe(v2);
    expect(registry.at('publishing', 'v3')).toBeUndefined();
    // A workflow stored before versions is taken by the latest.
    expect(registry.at('publishing', null)).toBe(v2);
    expect(registry.versions).toEqual([v1, v2]);
    expect(workflowRegistry([v2, v1]).get('publishing')).toBe(v1);
    // A plain map of one definition per name answers only for that definition's version.
    const plain = new Map([['publishing', v2]]);
    expect(definitionAt(plain, 'publishing', 'v2')).toBe(v2);
    expect(definitionAt(plain, 'publishing', 'v1')).toBeUndefined();
    expect(definitionAt(plain, 'publishing', null)).toBe(v2);
  });

  it('refuses two definitions of one name and version with duplicate_version', () => {
    const declared = definitionError(() => workflowRegistry([v1, publishing({ version: 'v1' })]));
    expect(declared.code).toBe('duplicate_version');
    expect(declared.problems).toEqual([
      'two definitions of workflow "publishing" have version "v1"',
    ]);
    // Without versions, two definitions of one shape are one version: refused alike.
    const digested = definitionError(() => workflowRegistry([publishing(), publishing()]));
    expect(digested.code).toBe('duplicate_version');
    // The same definition listed twice is one.
    expect(workflowRegistry([v1, v1]).versions).toEqual([v1]);
  });

  it('keeps the map children of two versions apart, and one of two alike', () => {
    const fan = (version: string) =>
      workflow({ name: 'fan', input, version })
        .step('list', { run: () => [1] })
        .map('each', { after: ['list'], over: (ctx) => ctx.results.list, run: () => version })
        .build();
    const registry = workflowRegistry(withMapChildren([fan('v1'), fan('v2')]));
    expect(registry.versions.map((each) => `${each.name}@${workflowVersion(each)}`)).toEqual([
      'fan@v1',
      'fan/each@v1',
      'fan@v2',
      'fan/each@v2',
    ]);
  });
});

describe('versionStatus', () => {
  it('is serving while a live engine lists it as its latest, else draining or drained', () => {
    expect(versionStatus({ latestOnLiveEngine: true, inFlight: 0 })).toBe('serving');
    expect(versionStatus({ latestOnLiveEngine: true, inFlight: 3 })).toBe('serving');
    expect(versionStatus({ latestOnLiveEngine: false, inFlight: 3 })).toBe('draining');
    expect(versionStatus({ latestOnLiveEngine: false, inFlight: 0 })).toBe('drained');
  });
});
