import { defineWorkflow, StepError, step } from '@causeway/workflow';
import { z } from 'zod';

/** Input of publish-note (public surfaces, docs/rules.md). */
export const publishNoteInput = z.object({
  noteId: z.string().min(1).max(200),
  version: z.number().int().nonnegative(),
  title: z.string().max(500).optional(),
  body: z.string().max(100_000).optional(),
  /** Platforms to syndicate the published note to, each as a child workflow (R44). */
  platforms: z.array(z.string().min(1).max(50)).max(20).optional(),
});
export type PublishNoteInput = z.output<typeof publishNoteInput>;

/**
 * render → review → publish. Publishing the same note version twice is one workflow: the
 * idempotency key is note id + action + version (seed 000).
 */
export const publishNote = defineWorkflow({
  name: 'publish-note',
  input: publishNoteInput,
  idempotencyKey: (input) => `note:${input.noteId}:publish:v${input.version}`,
  steps: {
    render: step<PublishNoteInput>({
      queue: 'cpu',
      reentrant: true,
      maxAttempts: 5,
      timeoutMs: 30_000,
      run: async (ctx) => {
        const title = ctx.input.title ?? `Note ${ctx.input.noteId}`;
        const html = `<article><h1>${escapeHtml(title)}</h1>${escapeHtml(ctx.input.body ?? '')}</article>`;
        await ctx.checkpoint('rendered', { bytes: html.length });
        return { html };
      },
    }),
    review: step<PublishNoteInput>({
      after: ['render'],
      reentrant: true,
      maxAttempts: 3,
      timeoutMs: 30_000,
      run: (ctx) => {
        const rendered = ctx.results.render as { html: string };
        if (rendered.html.length > 200_000) {
          throw new StepError('invalid_argument', 'rendered note is over 200 kB');
        }
        return { approved: true, reviewedBytes: rendered.html.length };
      },
    }),
    publish: step<PublishNoteInput>({
      after: ['review'],
      queue: 'network',
      reentrant: false,
      maxAttempts: 4,
      backoff: { initialIntervalMs: 2_000, maximumIntervalMs: 60_000 },
      timeoutMs: 60_000,
      run: async (ctx) => {
        // The effect boundary comes before the (future) platform call: a cancel is confirmed
        // here, and a crash after it is "effect uncertain" rather than a blind retry.
        await ctx.boundary();
        return {
          publishedAt: `/notes/${ctx.input.noteId}/v${ctx.input.version}`,
          key: ctx.idempotencyKey,
        };
      },
    }),
  },
});

/** Escapes text for the rendered note's HTML. */
export function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
