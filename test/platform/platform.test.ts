import { describe, expect, it } from 'vitest';
import {
  parseModeDirectives,
  type Receipt,
  receiptDeliveryPolicy,
} from '../../examples/platform/server';
import { waitFor } from '../helpers/wait-for';
import { call, postBody, settleOf, usePlatform, useReceiver } from './support';

describe('platform: idempotency keys', () => {
  it('performs one effect per key and replays the original answer', async () => {
    const platform = await usePlatform();
    const first = await call(platform, 'POST', '/posts', { body: postBody, key: 'k1' });
    const second = await call(platform, 'POST', '/posts', { body: postBody, key: 'k1' });

    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ status: 'published', noteId: 'n1', version: 1 });
    expect(first.body.acceptanceId).toMatch(/^acc_\d+$/);
    expect(second).toMatchObject({ status: 201, body: first.body });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.headers.get('idempotent-replayed')).toBe('true');

    const stats = platform.stats();
    expect(stats.postsPublished).toBe(1);
    expect(stats.posts).toEqual([
      expect.objectContaining({ id: first.body.id, idempotencyKey: 'k1', status: 'published' }),
    ]);
    expect(stats.idempotentReplays).toBe(1);
    expect(stats.requests.publishPost).toEqual({ '201': 2 });
  });

  it('answers 422 when a key comes back with another body, and performs nothing', async () => {
    const platform = await usePlatform();
    await call(platform, 'POST', '/posts', { body: postBody, key: 'k1' });
    const conflict = await call(platform, 'POST', '/posts', {
      body: { ...postBody, title: 'Changed' },
      key: 'k1',
    });
    expect(conflict.status).toBe(422);
    expect(conflict.body.error).toBe('idempotency_key_reused');
    expect(platform.stats().postsPublished).toBe(1);
  });

  it('compares bodies regardless of key order, and scopes keys per endpoint', async () => {
    const platform = await usePlatform();
    const first = await call(platform, 'POST', '/posts', { body: postBody, key: 'k' });
    const reordered = { html: postBody.html, title: postBody.title, version: 1, noteId: 'n1' };
    const again = await call(platform, 'POST', '/posts', { body: reordered, key: 'k' });
    expect(again.body).toEqual(first.body);

    const asset = await call(platform, 'POST', '/assets', {
      body: { noteId: 'n1', name: 'cover.png', bytes: 'abc' },
      key: 'k',
    });
    expect(asset.status).toBe(201);
    expect(asset.body).toMatchObject({ name: 'cover.png', size: 3 });
    expect(platform.stats()).toMatchObject({ postsPublished: 1, assetsUploaded: 1 });
  });

  it('performs the effect each time when no key is sent', async () => {
    const platform = await usePlatform();
    await call(platform, 'POST', '/posts', { body: postBody });
    await call(platform, 'POST', '/posts', { body: postBody });
    expect(platform.stats().postsPublished).toBe(2);
    expect(platform.stats().posts.map((post) => post.idempotencyKey)).toEqual([null, null]);
  });

  it('ignores keys when told to: a repeated key performs the effect again', async () => {
    const platform = await usePlatform({ ignoreIdempotencyKeys: true });
    const first = await call(platform, 'POST', '/posts', { body: postBody, key: 'k1' });
    const second = await call(platform, 'POST', '/posts', { body: postBody, key: 'k1' });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    // Even a different body is accepted: the platform does not look at keys at all.
    await call(platform, 'POST', '/posts', { body: { ...postBody, title: 'Other' }, key: 'k1' });
    const stats = platform.stats();
    expect(stats.postsPublished).toBe(3);
    expect(stats.posts.map((post) => post.idempotencyKey)).toEqual(['k1', 'k1', 'k1']);

    // Per request, on a platform that otherwise honours keys.
    platform.reset();
    await call(platform, 'POST', '/posts', { body: postBody, key: 'k2' });
    await call(platform, 'POST', '/posts', { body: postBody, key: 'k2', mode: 'no-idempotency' });
    expect(platform.stats().postsPublished).toBe(2);
  });
});

describe('platform: faults before the effect', () => {
  it('429 carries Retry-After (default 1 s, or the value asked) and performs nothing', async () => {
    const platform = await usePlatform();
    const plain = await call(platform, 'POST', '/posts', { body: postBody, key: 'k', mode: '429' });
    expect(plain.status).toBe(429);
    expect(plain.headers.get('retry-after')).toBe('1');
    expect(plain.body.error).toBe('rate_limited');

    const asked = await call(platform, 'POST', '/posts', {
      body: postBody,
      key: 'k',
      mode: 'rate-limited;retry-after=7',
    });
    expect(asked.headers.get('retry-after')).toBe('7');

    platform.configure({ fault: { kind: 'rate_limited', retryAfterSeconds: 3 } });
    const configured = await call(platform, 'GET', '/posts/post_1');
    expect(configured.status).toBe(429);
    expect(configured.headers.get('retry-after')).toBe('3');

    expect(platform.stats().postsPublished).toBe(0);
    // The key was not used up by the refusals.
    platform.configure({ fault: 'ok' });
    const ok = await call(platform, 'POST', '/posts', { body: postBody, key: 'k' });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('idempotent-replayed')).toBeNull();
  });

  it('503 performs nothing, with Retry-After only when asked', async () => {
    const platform = await usePlatform();
    const plain = await call(platform, 'POST', '/assets', {
      body: { noteId: 'n1', name: 'a.png' },
      mode: '503',
    });
    expect(plain.status).toBe(503);
    expect(plain.headers.get('retry-after')).toBeNull();
    const withRetry = await call(platform, 'POST', '/reviews', {
      body: { noteId: 'n1' },
      mode: 'unavailable;retry-after=2',
    });
    expect(withRetry.status).toBe(503);
    expect(withRetry.headers.get('retry-after')).toBe('2');
    expect(platform.stats()).toMatchObject({ assetsUploaded: 0, reviewsRequested: 0 });
  });

  it('401 as a fault, per request and per endpoint, performs nothing', async () => {
    const platform = await usePlatform({ endpoints: { publishPost: { fault: 'unauthorized' } } });
    const posted = await call(platform, 'POST', '/posts', { body: postBody });
    expect(posted.status).toBe(401);
    expect(posted.body.error).toBe('unauthorized');
    expect(posted.headers.get('www-authenticate')).toContain('invalid_token');
    const asset = await call(platform, 'POST', '/assets', { body: { noteId: 'n', name: 'x' } });
    expect(asset.status).toBe(201);
    const perRequest = await call(platform, 'POST', '/assets', {
      body: { noteId: 'n', name: 'y' },
      mode: '401',
    });
    expect(perRequest.status).toBe(401);
    expect(platform.stats()).toMatchObject({ postsPublished: 0, assetsUploaded: 1 });
  });

  it('checks the bearer token, and revoking it refuses everything', async () => {
    const platform = await usePlatform({ token: 'secret' });
    const missing = await call(platform, 'POST', '/posts', { body: postBody });
    expect(missing.status).toBe(401);
    const wrong = await call(platform, 'POST', '/posts', { body: postBody, token: 'nope' });
    expect(wrong.status).toBe(401);
    const right = await call(platform, 'POST', '/posts', { body: postBody, token: 'secret' });
    expect(right.status).toBe(201);

    platform.configure({ revokeToken: true });
    const revoked = await call(platform, 'POST', '/posts', { body: postBody, token: 'secret' });
    expect(revoked.status).toBe(401);
    expect(revoked.body.message).toContain('revoked');
    const read = await call(platform, 'GET', `/posts/${right.body.id}`, { token: 'secret' });
    expect(read.status).toBe(401);

    expect(platform.stats().postsPublished).toBe(1);
    expect(platform.stats().requests.publishPost).toEqual({ '201': 1, '401': 3 });
  });

  it('times out: accepts the connection, never answers, performs nothing', async () => {
    const platform = await usePlatform();
    const outcome = await settleOf(
      call(platform, 'POST', '/posts', {
        body: postBody,
        key: 'k',
        mode: 'timeout',
        signal: AbortSignal.timeout(150),
      }),
    );
    expect(outcome).toBe('TimeoutError');
    const stats = platform.stats();
    expect(stats.postsPublished).toBe(0);
    expect(stats.requests.publishPost).toEqual({ hung: 1 });
    expect(stats.log[0]).toMatchObject({ status: 'hung', fault: 'timeout', answeredAt: null });

    // Nothing was remembered for the key: the retry performs the effect once.
    const retry = await call(platform, 'POST', '/posts', { body: postBody, key: 'k' });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(platform.stats().postsPublished).toBe(1);
  });
});

describe('platform: faults after the effect ("maybe sent")', () => {
  it('slow: the effect happens at once, the answer comes later', async () => {
    const platform = await usePlatform();
    const held = settleOf(
      call(platform, 'POST', '/posts', { body: postBody, key: 'k1', mode: 'slow;delay=60000' }),
    );
    await waitFor(() => platform.stats().postsPublished === 1, { description: 'the post' });
    expect(platform.stats()).toMatchObject({ requestsOpen: 1, requests: { publishPost: {} } });

    const quick = await call(platform, 'POST', '/posts', {
      body: postBody,
      key: 'k2',
      mode: 'slow;delay=50',
    });
    expect(quick.status).toBe(201);
    expect(platform.stats().log).toEqual([
      expect.objectContaining({ status: 201, fault: 'slow', idempotencyKey: 'k2' }),
    ]);
    await platform.close();
    expect(await held).not.toBe('answered');
  });

  it('slow beyond the client timeout: the client gives up, the effect stands, the retry replays', async () => {
    const platform = await usePlatform({
      endpoints: { publishPost: { sequence: [{ kind: 'slow', delayMs: 2_000 }] } },
    });
    const outcome = await settleOf(
      call(platform, 'POST', '/posts', {
        body: postBody,
        key: 'k',
        signal: AbortSignal.timeout(150),
      }),
    );
    expect(outcome).toBe('TimeoutError');
    expect(platform.stats().postsPublished).toBe(1);

    const retry = await call(platform, 'POST', '/posts', { body: postBody, key: 'k' });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(platform.stats().postsPublished).toBe(1);
  });

  it('timeout after the effect: never answers, yet the post exists', async () => {
    const platform = await usePlatform();
    const outcome = await settleOf(
      call(platform, 'POST', '/posts', {
        body: postBody,
        key: 'k',
        mode: 'timeout_after_effect',
        signal: AbortSignal.timeout(150),
      }),
    );
    expect(outcome).toBe('TimeoutError');
    expect(platform.stats()).toMatchObject({
      postsPublished: 1,
      requests: { publishPost: { hung: 1 } },
    });
    const retry = await call(platform, 'POST', '/posts', { body: postBody, key: 'k' });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(platform.stats().postsPublished).toBe(1);
  });

  it('503 after the effect: the client sees a failure, the post exists', async () => {
    const platform = await usePlatform();
    const failed = await call(platform, 'POST', '/posts', {
      body: postBody,
      key: 'k',
      mode: 'unavailable-after-effect',
    });
    expect(failed.status).toBe(503);
    expect(platform.stats().postsPublished).toBe(1);
    const retry = await call(platform, 'POST', '/posts', { body: postBody, key: 'k' });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');

    // Without key support the same storm duplicates the post: what tests must prevent.
    platform.reset();
    platform.configure({ ignoreIdempotencyKeys: true });
    await call(platform, 'POST', '/posts', {
      body: postBody,
      key: 'k',
      mode: 'unavailable-after-effect',
    });
    await call(platform, 'POST', '/posts', { body: postBody, key: 'k' });
    expect(platform.stats().postsPublished).toBe(2);
  });
});

describe('platform: scripted sequences', () => {
  it('503 twice, then OK: one post, and the remaining requests use the endpoint fault', async () => {
    const platform = await usePlatform();
    platform.configure({
      endpoints: {
        publishPost: { sequence: [{ kind: 'unavailable', times: 2 }, 'ok'], fault: 'rate_limited' },
      },
    });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt += 1) {
      statuses.push((await call(platform, 'POST', '/posts', { body: postBody, key: 'k' })).status);
    }
    expect(statuses).toEqual([503, 503, 201, 429]);
    expect(platform.stats().postsPublished).toBe(1);
    expect(platform.stats().log.map((entry) => entry.fault)).toEqual([
      'unavailable',
      'unavailable',
      'ok',
      'rate_limited',
    ]);
  });

  it('a 429 storm with Retry-After values, per endpoint; other endpoints are untouched', async () => {
    const platform = await usePlatform({
      endpoints: {
        uploadAsset: {
          sequence: [
            { kind: 'rate_limited', retryAfterSeconds: 1 },
            { kind: 'rate_limited', retryAfterSeconds: 2 },
            { kind: 'rate_limited', retryAfterSeconds: 4 },
          ],
        },
      },
    });
    const post = await call(platform, 'POST', '/posts', { body: postBody });
    expect(post.status).toBe(201);
    const retryAfter: Array<string | null> = [];
    for (let attempt = 0; attempt < 4; attempt += 1) {
      const answer = await call(platform, 'POST', '/assets', { body: { noteId: 'n', name: 'a' } });
      retryAfter.push(answer.status === 429 ? answer.headers.get('retry-after') : 'ok');
    }
    expect(retryAfter).toEqual(['1', '2', '4', 'ok']);
    expect(platform.stats().assetsUploaded).toBe(1);
  });

  it('a request-level mode wins and does not consume the sequence; configure replaces it', async () => {
    const platform = await usePlatform({
      endpoints: { publishPost: { sequence: ['unavailable'] } },
    });
    expect((await call(platform, 'POST', '/posts', { body: postBody, mode: 'ok' })).status).toBe(
      201,
    );
    expect((await call(platform, 'POST', '/posts', { body: postBody })).status).toBe(503);
    expect((await call(platform, 'POST', '/posts', { body: postBody })).status).toBe(201);

    platform.configure({
      endpoints: { publishPost: { sequence: ['unavailable', 'unavailable'] } },
    });
    platform.configure({ endpoints: { publishPost: { sequence: ['rate_limited'] } } });
    expect((await call(platform, 'POST', '/posts', { body: postBody })).status).toBe(429);
    expect((await call(platform, 'POST', '/posts', { body: postBody })).status).toBe(201);
  });

  it('configure refuses unknown endpoints and fault kinds', async () => {
    const platform = await usePlatform();
    expect(() => platform.configure({ endpoints: { nope: {} } as never })).toThrow(
      /unknown endpoint/,
    );
    expect(() => platform.configure({ fault: 'explode' as never })).toThrow(/unknown fault/);
    expect(() =>
      platform.configure({
        fault: 'unavailable',
        endpoints: {
          publishPost: { sequence: ['unavailable'] },
          getPost: { sequence: ['ok', 'boom' as never] },
        },
      }),
    ).toThrow(/unknown fault/);
    // Nothing of the refused configuration was applied.
    expect((await call(platform, 'POST', '/posts', { body: postBody })).status).toBe(201);
  });
});

describe('platform: receipts', () => {
  it('a review is accepted, then its receipt is delivered once to an HTTP receiver', async () => {
    const platform = await usePlatform();
    const receiver = await useReceiver();
    const accepted = await call(platform, 'POST', '/reviews', {
      body: { noteId: 'n1', version: 2, callbackUrl: receiver.url, reference: 'task-1' },
      key: 'review-key',
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ status: 'pending' });
    const { acceptanceId, receiptId } = accepted.body as {
      acceptanceId: string;
      receiptId: string;
    };

    await waitFor(() => platform.stats().receiptsPending === 0 && receiver.received.length > 0, {
      description: 'the receipt delivery',
    });
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]?.body).toEqual({
      receiptId,
      acceptanceId,
      kind: 'review',
      resourceId: accepted.body.id,
      reference: 'task-1',
      outcome: 'ok',
    });
    expect(receiver.received[0]?.headers['idempotency-key']).toBe(`receipt:${receiptId}`);

    const submission = await call(platform, 'GET', `/submissions/${acceptanceId}`);
    expect(submission.body).toMatchObject({ kind: 'review', status: 'approved', receiptId });
    expect(platform.stats()).toMatchObject({
      reviewsRequested: 1,
      receiptsDelivered: 1,
      receiptDeliveryFailures: 0,
    });

    // The same review request again: replayed, no second review, no second receipt.
    const again = await call(platform, 'POST', '/reviews', {
      body: { noteId: 'n1', version: 2, callbackUrl: receiver.url, reference: 'task-1' },
      key: 'review-key',
    });
    expect(again.body).toEqual(accepted.body);
    expect(platform.stats()).toMatchObject({ reviewsRequested: 1, receiptsPending: 0 });
    expect(receiver.received).toHaveLength(1);
  });

  it('delivers to a configured function, with a rejection and its category', async () => {
    const got: Receipt[] = [];
    const platform = await usePlatform({
      callback: async (receipt) => {
        got.push(receipt);
      },
      receipt: { outcome: 'rejected', category: 'invalid_argument', message: 'too long' },
    });
    const accepted = await call(platform, 'POST', '/reviews', {
      body: { noteId: 'n1', reference: 'task-9' },
    });
    await waitFor(() => platform.stats().receiptsPending === 0 && got.length > 0, {
      description: 'the receipt',
    });
    expect(got).toEqual([
      expect.objectContaining({
        acceptanceId: accepted.body.acceptanceId,
        reference: 'task-9',
        outcome: 'rejected',
        category: 'invalid_argument',
        message: 'too long',
      }),
    ]);
    const submission = await call(platform, 'GET', `/submissions/${accepted.body.acceptanceId}`);
    expect(submission.body).toMatchObject({ status: 'rejected', category: 'invalid_argument' });
    expect(platform.stats().receipts).toEqual([
      expect.objectContaining({ target: 'function', outcome: 'rejected', attempts: 1 }),
    ]);
  });

  it('a post accepted for later: 202 pending, then published, visible through the acceptance id', async () => {
    const got: Receipt[] = [];
    const platform = await usePlatform({
      callback: (receipt) => {
        got.push(receipt);
      },
    });
    const accepted = await call(platform, 'POST', '/posts', {
      body: postBody,
      key: 'k',
      mode: 'receipt;delay=50',
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ status: 'pending' });
    expect(accepted.body.receiptId).toMatch(/^rcpt_\d+$/);

    await waitFor(() => got.length === 1, { description: 'the post receipt' });
    const submission = await call(platform, 'GET', `/submissions/${accepted.body.acceptanceId}`);
    expect(submission.body).toMatchObject({ kind: 'post', status: 'published' });
    const post = await call(platform, 'GET', `/posts/${accepted.body.id}`);
    expect(post.body).toMatchObject({ status: 'published', html: postBody.html });
    expect(platform.stats()).toMatchObject({ postsPublished: 1, postsPending: 0 });
  });

  it('hold: stays pending until settle(), which delivers the verdict given', async () => {
    const got: Receipt[] = [];
    const platform = await usePlatform({
      callback: (receipt) => {
        got.push(receipt);
      },
      endpoints: { publishPost: { receipt: { hold: true } } },
    });
    const accepted = await call(platform, 'POST', '/posts', { body: postBody });
    const acceptanceId = accepted.body.acceptanceId as string;
    expect((await call(platform, 'GET', `/submissions/${acceptanceId}`)).body.status).toBe(
      'pending',
    );
    expect(platform.stats()).toMatchObject({
      postsPublished: 0,
      postsPending: 1,
      receiptsPending: 1,
    });

    const receipt = await platform.settle(acceptanceId, {
      outcome: 'rejected',
      category: 'unauthorized',
    });
    expect(receipt).toMatchObject({ outcome: 'rejected', category: 'unauthorized' });
    expect(got).toEqual([receipt]);
    expect(platform.stats()).toMatchObject({
      postsPublished: 0,
      postsRejected: 1,
      receiptsPending: 0,
    });
    await expect(platform.settle(acceptanceId)).rejects.toThrow(/no pending submission/);
  });

  it('retries a failed delivery with backoff and delivers once', async () => {
    const platform = await usePlatform();
    const receiver = await useReceiver((n) => (n === 1 ? 500 : 200));
    await call(platform, 'POST', '/reviews', { body: { noteId: 'n1', callbackUrl: receiver.url } });
    await waitFor(() => platform.stats().receiptsPending === 0 && receiver.received.length > 0, {
      description: 'the receipt delivery',
    });
    expect(receiver.received).toHaveLength(2);
    expect(platform.stats()).toMatchObject({ receiptsDelivered: 1, receiptDeliveryFailures: 1 });
    expect(platform.stats().receipts[0]).toMatchObject({ target: 'url', attempts: 2 });
    expect(platform.stats().lastReceiptDeliveryError).toContain('500');
  });

  it('a function that keeps failing gets maxAttempts tries, then the platform gives up', async () => {
    let calls = 0;
    const platform = await usePlatform({
      callback: () => {
        calls += 1;
        throw new Error('task is not awaiting a receipt');
      },
    });
    await call(platform, 'POST', '/reviews', { body: { noteId: 'n1' } });
    await waitFor(() => platform.stats().receiptsPending === 0, {
      description: 'the delivery to give up',
    });
    expect(calls).toBe(receiptDeliveryPolicy.maxAttempts);
    expect(platform.stats()).toMatchObject({
      receiptsDelivered: 0,
      receiptDeliveryFailures: receiptDeliveryPolicy.maxAttempts,
      lastReceiptDeliveryError: 'task is not awaiting a receipt',
    });
  });

  it('deliveries=2 sends the same receipt twice (a duplicate for receivers to absorb)', async () => {
    const platform = await usePlatform();
    const receiver = await useReceiver();
    await call(platform, 'POST', '/reviews', {
      body: { noteId: 'n1', callbackUrl: receiver.url },
      mode: 'receipt;deliveries=2',
    });
    await waitFor(() => platform.stats().receiptsPending === 0 && receiver.received.length > 0, {
      description: 'the deliveries',
    });
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]?.body).toEqual(receiver.received[0]?.body);
    expect(platform.stats().receiptsDelivered).toBe(2);
  });

  it('no callback configured: the outcome is only queryable', async () => {
    const platform = await usePlatform();
    const accepted = await call(platform, 'POST', '/reviews', { body: { noteId: 'n1' } });
    await waitFor(async () => {
      const answer = await call(platform, 'GET', `/submissions/${accepted.body.acceptanceId}`);
      return answer.body.status === 'approved';
    });
    expect(platform.stats()).toMatchObject({ receiptsDelivered: 0, receiptsPending: 0 });
  });
});

describe('platform: requests, stats and lifecycle', () => {
  it('validates bodies, routes and modes without performing anything', async () => {
    const platform = await usePlatform();
    expect((await call(platform, 'POST', '/posts', { body: { noteId: 'n1' } })).status).toBe(400);
    expect(
      (await call(platform, 'POST', '/posts', { body: { ...postBody, version: -1 } })).status,
    ).toBe(400);
    expect(
      (await call(platform, 'POST', '/reviews', { body: { noteId: 'n', callbackUrl: 'nope' } }))
        .status,
    ).toBe(400);
    const badMode = await call(platform, 'POST', '/posts', { body: postBody, mode: 'explode' });
    expect(badMode).toMatchObject({ status: 400, body: { error: 'invalid_mode' } });
    expect((await call(platform, 'GET', '/nowhere')).status).toBe(404);
    expect((await call(platform, 'GET', '/posts/post_999')).status).toBe(404);
    expect((await call(platform, 'GET', '/submissions/acc_999')).status).toBe(404);
    const raw = await fetch(`${platform.url}/posts`, { method: 'POST', body: '{not json' });
    expect(raw.status).toBe(400);
    const stats = platform.stats();
    expect(stats).toMatchObject({ postsPublished: 0, reviewsRequested: 0, assetsUploaded: 0 });
    expect(stats.requests.unmatched).toEqual({ '404': 1 });
  });

  it('takes the mode from the query string too', async () => {
    const platform = await usePlatform();
    const answer = await call(
      platform,
      'GET',
      `/posts/x?mode=${encodeURIComponent('429;retry-after=5')}`,
    );
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('5');
  });

  it('counts requests by endpoint and status, logs them, and reset() forgets everything', async () => {
    const seen: string[] = [];
    const platform = await usePlatform({ onRequest: (record) => seen.push(`${record.status}`) });
    const asset = await call(platform, 'POST', '/assets', {
      body: { noteId: 'n1', name: 'a.png', bytes: 1234 },
      key: 'a',
    });
    await call(platform, 'POST', '/assets', {
      body: { noteId: 'n1', name: 'a.png', bytes: 1234 },
      key: 'a',
    });
    const post = await call(platform, 'POST', '/posts', { body: postBody, key: 'p' });
    await call(platform, 'POST', '/posts', { body: postBody, mode: '503' });
    await call(platform, 'GET', `/posts/${post.body.id}`);
    await call(platform, 'GET', `/submissions/${asset.body.acceptanceId}`);

    const stats = platform.stats();
    expect(stats).toMatchObject({
      assetsUploaded: 1,
      postsPublished: 1,
      idempotentReplays: 1,
      requests: {
        uploadAsset: { '201': 2 },
        publishPost: { '201': 1, '503': 1 },
        getPost: { '200': 1 },
        getSubmission: { '200': 1 },
        requestReview: {},
        unmatched: {},
      },
    });
    expect(stats.assets).toEqual([
      expect.objectContaining({ name: 'a.png', size: 1234, idempotencyKey: 'a' }),
    ]);
    expect(stats.log.map((entry) => [entry.endpoint, entry.status, entry.replayed])).toEqual([
      ['uploadAsset', 201, false],
      ['uploadAsset', 201, true],
      ['publishPost', 201, false],
      ['publishPost', 503, false],
      ['getPost', 200, false],
      ['getSubmission', 200, false],
    ]);
    expect(seen).toEqual(['201', '201', '201', '503', '200', '200']);
    await waitFor(() => platform.stats().requestsOpen === 0, { description: 'no open request' });
    // A snapshot does not move.
    await call(platform, 'POST', '/posts', { body: postBody });
    expect(stats.postsPublished).toBe(1);

    platform.configure({ fault: 'unavailable' });
    platform.reset();
    const after = platform.stats();
    expect(after).toMatchObject({ assetsUploaded: 0, postsPublished: 0, idempotentReplays: 0 });
    expect(after.log).toEqual([]);
    // Keys are forgotten and the fault is gone: the same key performs again; ids stay unique.
    const again = await call(platform, 'POST', '/posts', { body: postBody, key: 'p' });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(post.body.id);
  });

  it('close() ends hung requests and stops listening', async () => {
    const platform = await usePlatform();
    const hung = settleOf(call(platform, 'POST', '/posts', { body: postBody, mode: 'hang' }));
    const slow = settleOf(call(platform, 'GET', '/posts/x', { mode: 'slow;delay=60000' }));
    await waitFor(() => platform.stats().requestsOpen === 2, { description: 'both requests' });
    expect(platform.stats().requests).toMatchObject({ publishPost: { hung: 1 }, getPost: {} });
    await platform.close();
    expect(await hung).not.toBe('answered');
    expect(await slow).not.toBe('answered');
    await platform.close(); // idempotent
    expect(await settleOf(fetch(`${platform.url}/posts/x`))).not.toBe('answered');
  });
});

describe('platform: mode directives', () => {
  it('parses faults, aliases, flags and receipt parameters', () => {
    expect(parseModeDirectives('')).toEqual({});
    expect(parseModeDirectives('429;retry-after=3')).toEqual({
      fault: { kind: 'rate_limited', retryAfterSeconds: 3 },
    });
    expect(parseModeDirectives('slow; delay=250, no-idempotency')).toEqual({
      fault: { kind: 'slow', delayMs: 250 },
      ignoreIdempotencyKeys: true,
    });
    expect(parseModeDirectives('hang')).toEqual({ fault: { kind: 'timeout' } });
    expect(
      parseModeDirectives(
        'receipt;outcome=rejected;category=unauthorized;delay=5;hold;deliveries=2',
      ),
    ).toEqual({
      receipt: {
        outcome: 'rejected',
        category: 'unauthorized',
        delayMs: 5,
        hold: true,
        deliveries: 2,
      },
    });
  });

  it('refuses what it does not know', () => {
    expect(() => parseModeDirectives('explode')).toThrow(/unknown mode directive/);
    expect(() => parseModeDirectives('429;delay=x')).toThrow(/non-negative integer/);
    expect(() => parseModeDirectives('429;colour=red')).toThrow(/unknown parameter/);
    expect(() => parseModeDirectives('receipt;outcome=maybe')).toThrow(/ok or rejected/);
    expect(() => parseModeDirectives('ignore-idempotency;x=1')).toThrow(/unknown parameter/);
  });
});
