import type { Endpoint } from './endpoints';
import {
  HttpError,
  optionalString,
  optionalUrl,
  optionalVersion,
  requiredString,
  requiredText,
  requiredVersion,
} from './http';
import type { RequestPlan } from './modes';
import type { ReceiptDispatcher } from './receipts';
import type { PlatformRecords, PostRecord } from './records';

export interface RouteContext {
  readonly body: Record<string, unknown>;
  /** The `:id` path segment. */
  readonly param: string | null;
  readonly plan: RequestPlan;
  /** The request's key, recorded on what it creates (also when keys are ignored). */
  readonly idempotencyKey: string | null;
  readonly records: PlatformRecords;
  readonly receipts: ReceiptDispatcher;
}

export interface RouteAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * One handler per endpoint. Handlers are synchronous: an effect is performed (or not)
 * entirely between two awaits, so an idempotency key cannot race with itself.
 */
export const routes: { readonly [E in Endpoint]: (context: RouteContext) => RouteAnswer } = {
  /** POST /assets { noteId, name, bytes? } → 201 { id, acceptanceId, size, url }. */
  uploadAsset: ({ body, idempotencyKey, records }) => {
    const asset = records.uploadAsset(
      {
        noteId: requiredString(body, 'noteId'),
        name: requiredString(body, 'name'),
        size: sizeOf(body.bytes),
      },
      idempotencyKey,
    );
    return {
      status: 201,
      body: {
        id: asset.id,
        acceptanceId: asset.acceptanceId,
        noteId: asset.noteId,
        name: asset.name,
        size: asset.size,
        url: `/assets/${asset.id}`,
      },
    };
  },

  /**
   * POST /posts { noteId, version, title, html, callbackUrl?, reference? } → 201 published,
   * or 202 pending with a receiptId when a receipt mode applies (settled and called back later).
   */
  publishPost: ({ body, plan, idempotencyKey, records, receipts }) => {
    const input = {
      noteId: requiredString(body, 'noteId'),
      version: requiredVersion(body, 'version'),
      title: requiredString(body, 'title'),
      html: requiredText(body, 'html'),
      reference: optionalString(body, 'reference'),
    };
    const callbackUrl = optionalUrl(body, 'callbackUrl');
    const settleLater = plan.receipt !== undefined;
    const post = records.acceptPost(input, idempotencyKey, settleLater);
    if (plan.receipt !== undefined) receipts.schedule(post.acceptanceId, plan.receipt, callbackUrl);
    return { status: settleLater ? 202 : 201, body: postView(post) };
  },

  /** GET /posts/:id → 200 with the post (its html included), 404 when unknown. */
  getPost: ({ param, records }) => {
    const post = param === null ? undefined : records.post(param);
    if (post === undefined) throw new HttpError(404, 'not_found', `no post ${param}`);
    return { status: 200, body: { ...postView(post), html: post.html } };
  },

  /** GET /submissions/:acceptanceId → 200 { status: pending | published | approved | rejected }. */
  getSubmission: ({ param, records }) => {
    const submission = param === null ? undefined : records.submission(param);
    if (submission === undefined) throw new HttpError(404, 'not_found', `no submission ${param}`);
    return { status: 200, body: submission };
  },

  /**
   * POST /reviews { noteId, version?, html?, callbackUrl?, reference? } → 202 pending with a
   * receiptId; the receipt `{ receiptId, outcome: 'ok' | 'rejected', category? }` comes later.
   */
  requestReview: ({ body, plan, idempotencyKey, records, receipts }) => {
    const input = {
      noteId: requiredString(body, 'noteId'),
      version: optionalVersion(body, 'version'),
      reference: optionalString(body, 'reference'),
    };
    optionalString(body, 'html');
    const callbackUrl = optionalUrl(body, 'callbackUrl');
    const review = records.requestReview(input, idempotencyKey);
    receipts.schedule(review.acceptanceId, plan.receipt ?? {}, callbackUrl);
    return {
      status: 202,
      body: {
        id: review.id,
        acceptanceId: review.acceptanceId,
        receiptId: review.receiptId,
        status: review.status,
      },
    };
  },
};

function postView(post: PostRecord): Record<string, unknown> {
  return {
    id: post.id,
    acceptanceId: post.acceptanceId,
    noteId: post.noteId,
    version: post.version,
    title: post.title,
    status: post.status,
    receiptId: post.receiptId,
    url: `/posts/${post.id}`,
  };
}

function sizeOf(bytes: unknown): number {
  if (bytes === undefined || bytes === null) return 0;
  if (typeof bytes === 'string') return Buffer.byteLength(bytes);
  if (typeof bytes === 'number' && Number.isInteger(bytes) && bytes >= 0) return bytes;
  throw new HttpError(400, 'invalid_request', 'bytes must be a string or a non-negative integer');
}
