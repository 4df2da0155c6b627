/**
 * What the compiler knows of an event step (R37): `workflow(...).event(...)` types its key's
 * `ctx` by the input and upstream results, and downstream steps read the payload as its schema
 * parses it; `.add(name, event({...}))` types it the same way. Type checks: `pnpm run
 * typecheck` fails when an inference breaks, and each `@ts-expect-error` when its mistake stops
 * being one.
 */
import { type DeepReadonly, DefinitionError, event, workflow } from '@causeway/workflow';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';

const input = z.object({ noteId: z.string(), version: z.number().int() });
const verdict = z.object({ editor: z.string(), verdict: z.enum(['approved', 'rejected']) });

describe('event steps in the builder', () => {
  it('types the key by the input and upstream results, and the payload downstream', () => {
    workflow({ name: 'typed-event', input })
      .step('review', { run: () => ({ reviewer: 'ada', score: 3 }) })
      .event('approval', {
        after: ['review'],
        name: 'note.approved',
        key: (ctx) => {
          expectTypeOf(ctx.input).toEqualTypeOf<DeepReadonly<z.output<typeof input>>>();
          expectTypeOf(ctx.results.review).toEqualTypeOf<{
            readonly reviewer: string;
            readonly score: number;
          }>();
          // @ts-expect-error approval is not upstream of its own key
          void ctx.results.approval;
          return ctx.input.noteId;
        },
        payload: verdict,
        timeoutMs: 60_000,
        onTimeout: { editor: 'nobody', verdict: 'rejected' },
      })
      .step('publish', {
        after: ['approval'],
        run: (ctx) => {
          expectTypeOf(ctx.results.approval).toEqualTypeOf<{
            readonly editor: string;
            readonly verdict: 'approved' | 'rejected';
          }>();
          return ctx.results.approval.verdict === 'approved';
        },
      })
      .build();
  });

  it('refuses an after that names no earlier step, and an onTimeout the schema refuses', () => {
    workflow({ name: 'typed-event-bad', input }).event('approval', {
      // @ts-expect-error no step "review" was declared before
      after: ['review'],
      name: 'note.approved',
      key: 'k',
      timeoutMs: 1,
    });
    // Refused at run time too, when the module loads.
    expect(() =>
      event({
        name: 'note.approved',
        key: 'k',
        payload: verdict,
        timeoutMs: 1,
        // @ts-expect-error not a verdict
        onTimeout: { editor: 1 },
      }),
    ).toThrow(DefinitionError);
  });

  it('types an event step made apart and added with .add', () => {
    workflow({ name: 'typed-event-add', input })
      .add('approval', event({ name: 'note.approved', key: 'k', payload: verdict, timeoutMs: 1 }))
      .step('publish', {
        after: ['approval'],
        run: (ctx) => {
          expectTypeOf(ctx.results.approval.editor).toEqualTypeOf<string>();
          return null;
        },
      })
      .build();
  });

  it('reads an event without a schema as unknown', () => {
    workflow({ name: 'typed-event-free', input })
      .event('ping', { name: 'ping.free', key: 'k', timeoutMs: 1 })
      .step('after', {
        after: ['ping'],
        run: (ctx) => {
          expectTypeOf(ctx.results.ping).toEqualTypeOf<unknown>();
          return null;
        },
      })
      .build();
  });
});
