/**
 * publish-note against the publishing platform (examples/platform): render uploads its
 * assets with a checkpoint each (a retry never uploads them again), review waits for the
 * platform's receipt, approval waits for an editor's `note.approved` event keyed by the note
 * id (R37), and publish goes through the transactional outbox — unless the editor rejected it
 * or never answered. Then syndicate starts one child workflow per platform in the input (R44). `pnpm start` runs this version; tests that need no platform use the
 * three-step `publishNote` from ./workflow.
 */
import { type Channel, httpChannel } from '@causeway/engine';
import { awaitReceipt, StepError, send, workflow } from '@causeway/workflow';
import { z } from 'zod';
import { retryAfterOf } from './retry-after';
import { platformApiLimit, publishToPlatform } from './syndicate';
import { escapeHtml, publishNoteInput } from './workflow';

/** An editor's answer, the payload of `note.approved`. */
export const approvalVerdict = z.object({
  editor: z.string().min(1).max(200),
  verdict: z.enum(['approved', 'rejected']),
});

/** An editor has three days to answer; without an answer the note is not published. */
export const defaultApprovalTimeoutMs = 3 * 24 * 3_600_000;

export interface PlatformConnection {
  /** Base URL, e.g. http://127.0.0.1:4100 */
  readonly url: string;
  readonly token?: string;
  /** How long approval waits for the editor (the demo shortens it). */
  readonly approvalTimeoutMs?: number;
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

/** The rate limits an engine running publish-note declares (R51): its steps spend them. */
export const publishNoteRateLimits = [platformApiLimit];

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
    if (response.status === 401)
      throw new StepError('unauthorized', `platform ${path}: authorization revoked`);
    if (response.status === 429) {
      // R51: the retry comes exactly when the platform said it has room again.
      const retryAfterMs = retryAfterOf(response.headers.get('retry-after'));
      throw new StepError('throttled', `platform ${path}: 429`, {
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      });
    }
    if (response.status >= 500)
      throw new StepError('unavailable', `platform ${path}: ${response.status}`);
    throw new StepError(
      'invalid_argument',
      `platform ${path}: ${response.status} ${String(answer.message ?? '')}`,
    );
  };

  return (
    workflow({
      name: 'publish-note',
      input: publishNoteInput,
      idempotencyKey: (input) => `note:${input.noteId}:publish:v${input.version}`,
    })
      .step('render', {
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
      })
      .step('review', {
        after: ['render'],
        queue: 'network',
        reentrant: true,
        maxAttempts: 3,
        timeoutMs: 30_000,
        run: async (ctx) => {
          const review = await call(
            '/reviews',
            {
              noteId: ctx.input.noteId,
              version: ctx.input.version,
              html: ctx.results.render.html,
              reference: ctx.taskId,
            },
            `${ctx.idempotencyKey}:review`,
            ctx.signal,
          );
          // The platform answers later through its callback (engine.recordReceipt).
          return awaitReceipt({ receiptId: String(review.receiptId), timeoutMs: 60_000 });
        },
      })
      // A person answers later, or never: no worker waits, and the wait survives restarts.
      .event('approval', {
        after: ['review'],
        name: 'note.approved',
        key: (ctx) => ctx.input.noteId,
        payload: approvalVerdict,
        timeoutMs: platform.approvalTimeoutMs ?? defaultApprovalTimeoutMs,
        onTimeout: { editor: 'nobody', verdict: 'rejected' },
      })
      .step('publish', {
        after: ['approval'],
        queue: 'network',
        reentrant: false,
        maxAttempts: 4,
        timeoutMs: 60_000,
        run: (ctx) => {
          const { editor, verdict } = ctx.results.approval;
          if (verdict !== 'approved') return { published: false, editor, verdict };
          return send('platform', {
            noteId: ctx.input.noteId,
            version: ctx.input.version,
            title: ctx.results.render.title,
            html: ctx.results.render.html,
            approvedBy: editor,
          });
        },
      })
      // One child workflow per platform the author chose (none: succeeds at once with []); one
      // platform may fail without failing the note, and the output says which did (R44, R45).
      .map('syndicate', {
        after: ['publish'],
        over: (ctx) =>
          ctx.results.approval.verdict === 'approved' ? (ctx.input.platforms ?? []) : [],
        workflow: publishToPlatform(platform.url),
        input: (name, _index, ctx) => ({
          noteId: ctx.input.noteId,
          version: ctx.input.version,
          platform: name,
          title: ctx.results.render.title,
        }),
        tolerate: { failures: 1 },
      })
      .build()
  );
}
