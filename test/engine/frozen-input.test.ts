import { defineWorkflow, payloadRef, payloadReference, StepError, step } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound } from './semantics-support';

/**
 * R30 on a real run: `ctx.input` is frozen at every depth, so a step's write throws (ES
 * modules are strict) and neither its retry nor the next step sees a change; a large body
 * travels as a payload reference.
 */
const database = useTestDatabase();
const url = () => database().url;

const noteInput = z.object({
  label: z.string(),
  title: z.string(),
  meta: z.object({ author: z.object({ name: z.string() }), tags: z.array(z.string()) }),
  body: payloadReference,
});
type NoteInput = z.output<typeof noteInput>;

/** What each attempt saw and what each write it tried did, by step and attempt. */
const seen = new Map<string, unknown>();
const writes = new Map<string, string>();

/** Tries `write` against the frozen input; records the error it threw, or that it did not. */
function attempt(name: string, write: () => unknown): void {
  try {
    write();
    writes.set(name, 'no error');
  } catch (error) {
    writes.set(name, error instanceof TypeError ? 'TypeError' : String(error));
  }
}

const frozen = defineWorkflow({
  name: 'frozen-note',
  input: noteInput,
  steps: {
    mutate: step<NoteInput>({
      queue: 'q-frozen',
      reentrant: true,
      maxAttempts: 2,
      backoff: { initialIntervalMs: 0, maximumIntervalMs: 0 },
      run: (ctx) => {
        // The types say read-only too; the casts stand for code that ignores them.
        const input = ctx.input as unknown as {
          title: string;
          added?: string;
          meta: { author: { name: string }; tags: string[] };
          body: { uri: string };
        };
        if (ctx.attempt === 1) {
          attempt('top-level field', () => {
            input.title = 'changed';
          });
          attempt('new top-level field', () => {
            input.added = 'added';
          });
          attempt('nested field', () => {
            input.meta.author.name = 'eve';
          });
          attempt('nested array', () => input.meta.tags.push('injected'));
          attempt('reference', () => {
            input.body.uri = 's3://elsewhere/other';
          });
        }
        seen.set(`mutate:${ctx.attempt}`, structuredClone(ctx.input));
        if (ctx.attempt === 1) throw new StepError('network', 'retry, to see the input again');
        return { attempts: ctx.attempt };
      },
    }),
    read: step<NoteInput>({
      queue: 'q-frozen',
      after: ['mutate'],
      run: (ctx) => {
        seen.set('read:1', structuredClone(ctx.input));
        return { title: ctx.input.title, author: ctx.input.meta.author.name, body: ctx.input.body };
      },
    }),
  },
});

beforeAll(async () => {
  const setup = testEngine(url(), { workflows: [frozen] });
  await setup.migrate();
  await setup.close();
});

describe('ctx.input is frozen at every depth (R30)', () => {
  it('a write throws in strict mode; the retry and the next step see the original input', async () => {
    const cw = testEngine(url(), { workflows: [frozen] });
    const input: NoteInput = {
      label: 'frozen',
      title: 'Original title',
      meta: { author: { name: 'ada' }, tags: ['a', 'b'] },
      body: payloadRef({ uri: 's3://notes/frozen/body.md', version: 'v3', sizeBytes: 9_000_000 }),
    };
    const submitted = await cw.submit('frozen-note', input);
    const worker = await cw.startWorker({ queues: ['q-frozen'], concurrency: 1 });
    const view = await waitFor(async () => {
      const current = await cw.getWorkflow(submitted.workflow.id);
      return current?.state === 'succeeded' ? current : undefined;
    });
    await worker.stop();

    expect(Object.fromEntries(writes)).toEqual({
      'top-level field': 'TypeError',
      'new top-level field': 'TypeError',
      'nested field': 'TypeError',
      'nested array': 'TypeError',
      reference: 'TypeError',
    });
    expect(Object.fromEntries(seen)).toEqual({
      'mutate:1': input,
      'mutate:2': input,
      'read:1': input,
    });
    const [mutate, read] = view.tasks;
    expect(mutate?.transitions.map((row) => row.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'retry_scheduled',
      'lease_acquired',
      'completed',
    ]);
    expect(read?.output).toEqual({ title: 'Original title', author: 'ada', body: input.body });
    // What was stored is what was submitted.
    expect(view.input).toEqual(input);
  });
});

describe('the log of this file', () => {
  it('holds only allowed edges, in unbroken chains, matching every current state (R25)', async () => {
    await expectLogIsSound(url());
  });
});
