/**
 * publish-note against the publishing platform (examples/platform): render uploads its
 * assets with a checkpoint each (a retry never uploads them again), review waits for the
 * platform's receipt, publish goes through the transactional outbox. `pnpm start` runs this
 * version; tests that need no platform use `publishNote` from ./workflow.
 */
import { type Channel, httpChannel } from '@causeway/engine';
import { awaitReceipt, defineWorkflow, StepError, send, step } from '@causeway/workflow';
import { escapeHtml, type PublishNoteInput, publishNoteInput } from './workflow';

export interface PlatformConnection {
  /** Base URL, e.g. http://127.0.0.1:4100 */
  readonly url: string;
  readonly token?: string;
}

/** The outbox channel that publishes posts; a 2xx from the platform confirms the effect. */
export function platformChannel(platform: PlatformConnection): Channel {
  return httpChannel({
    name: 'platform',
    url: `${platform.url}/posts`,
    confirm: 'response',
    timeoutMs: 5_000,
    ...(platform.token === undefined
      ? {}
      : { headers: { authorization: `Bearer ${platform.token}` } }),
  });
}

export function publishNoteWithPlatform(platform: PlatformConnection) {
  const call = async (path: string, body: unknown, idempotencyKey: string, signal: AbortSignal) => {
    let response: Response;
    try {
      response = await fetch(`${platform.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
          ...(platform.token === undefined ? {} : { authorization: `Bearer ${platform.token}` }),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, AbortSignal.timeout(5_000)]),
      });
    } catch (error) {
      throw new StepError('network', `platform ${path}: ${String(error)}`);
    }
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (response.ok) return answer;
    const retryAfter = Number(response.headers.get('retry-after'));
    if (response.status === 401)
      throw new StepError('unauthorized', `platform ${path}: authorization revoked`);
    if (response.status === 429) {
      throw new StepError('throttled', `platform ${path}: 429`, {
        ...(Number.isFinite(retryAfter) ? { retryAfterMs: retryAfter * 1_000 } : {}),
      });
    }
    if (response.status >= 500)
      throw new StepError('unavailable', `platform ${path}: ${response.status}`);
    throw new StepError(
      'invalid_argument',
      `platform ${path}: ${response.status} ${String(answer.message ?? '')}`,
    );
  };

  return defineWorkflow({
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
          for (const name of ['cover.png', 'body.html']) {
            if (ctx.checkpoints[`asset:${name}`] !== undefined) continue; // uploaded by an earlier attempt
            const asset = await call(
              '/assets',
              { noteId: ctx.input.noteId, name, bytes: html.length },
              `${ctx.idempotencyKey}:asset:${name}`,
              ctx.signal,
            );
            await ctx.checkpoint(`asset:${name}`, { id: asset.id });
          }
          return { html, title };
        },
      }),
      review: step<PublishNoteInput>({
        after: ['render'],
        queue: 'network',
        reentrant: true,
        maxAttempts: 3,
        timeoutMs: 30_000,
        run: async (ctx) => {
          const rendered = ctx.results.render as { html: string };
          const review = await call(
            '/reviews',
            {
              noteId: ctx.input.noteId,
              version: ctx.input.version,
              html: rendered.html,
              reference: ctx.taskId,
            },
            `${ctx.idempotencyKey}:review`,
            ctx.signal,
          );
          // The platform answers later through its callback (engine.recordReceipt).
          return awaitReceipt({ receiptId: String(review.receiptId), timeoutMs: 60_000 });
        },
      }),
      publish: step<PublishNoteInput>({
        after: ['review'],
        queue: 'network',
        reentrant: false,
        maxAttempts: 4,
        timeoutMs: 60_000,
        run: (ctx) => {
          const rendered = ctx.results.render as { html: string; title: string };
          return send('platform', {
            noteId: ctx.input.noteId,
            version: ctx.input.version,
            title: rendered.title,
            html: rendered.html,
          });
        },
      }),
    },
  });
}
