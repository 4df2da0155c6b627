import { defineWorkflow, step } from '@causeway/workflow';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Platform, startPlatform } from '../../examples/platform/server';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import { edges, waitForWorkflowState } from './fixtures/parent';
import { callPlatform } from './fixtures/platform-client';

/**
 * Partial success is not redone (issue 4, rules R19, R20): a step uploads its assets with a
 * checkpoint per asset, then submits the body, which times out. The retry resumes after the
 * last checkpoint: the platform counts every upload, so a second upload would show.
 */

const database = useTestDatabase();
let platform: Platform | undefined;
afterEach(async () => {
  await platform?.close();
  platform = undefined;
});

const assetNames = ['cover.png', 'figure-1.svg', 'figure-2.svg'] as const;
/** The client gives up on the body submit after this long (AbortSignal.timeout). */
const submitTimeoutMs = 300;

const input = z.object({ noteId: z.string(), platformUrl: z.url() });
type Input = z.output<typeof input>;

interface Run {
  readonly attempt: number;
  readonly checkpoints: readonly string[];
}

function publishWithAssets(runs: Run[]) {
  return defineWorkflow({
    name: 'publish-with-assets',
    input,
    steps: {
      publish: step<Input>({
        reentrant: false,
        maxAttempts: 3,
        backoff: { initialIntervalMs: 10, backoffCoefficient: 2, maximumIntervalMs: 50 },
        run: async (ctx) => {
          runs.push({ attempt: ctx.attempt, checkpoints: Object.keys(ctx.checkpoints).sort() });
          const base = ctx.input.platformUrl;
          const assets: Record<string, unknown> = {};
          for (const name of assetNames) {
            const checkpoint = `asset:${name}`;
            const done = ctx.checkpoints[checkpoint];
            if (done !== undefined) {
              assets[name] = done; // uploaded by an earlier attempt: never again (R19)
              continue;
            }
            const { body } = await callPlatform(`${base}/assets`, {
              idempotencyKey: `${ctx.idempotencyKey}:${checkpoint}`,
              body: { noteId: ctx.input.noteId, name, bytes: `bytes of ${name}` },
            });
            const uploaded = { id: body.id, acceptanceId: body.acceptanceId };
            await ctx.checkpoint(checkpoint, uploaded);
            assets[name] = uploaded;
          }
          const { body } = await callPlatform(`${base}/posts`, {
            idempotencyKey: ctx.idempotencyKey,
            timeoutMs: submitTimeoutMs,
            body: {
              noteId: ctx.input.noteId,
              version: 1,
              title: `Note ${ctx.input.noteId}`,
              html: assetNames.map((name) => `<img src="${name}">`).join(''),
            },
          });
          return { postId: body.id, assets };
        },
      }),
    },
  });
}

async function publishOnce(fault: 'timeout' | 'timeout_after_effect') {
  platform = await startPlatform({});
  // The first body submit meets the fault; later ones are answered normally.
  platform.configure({ endpoints: { publishPost: { sequence: [fault] } } });
  const url = database().url;
  const runs: Run[] = [];
  const engine = testEngine(url, { workflows: [publishWithAssets(runs)] });
  await engine.migrate();
  const { workflow } = await engine.submit('publish-with-assets', {
    noteId: `note-${fault}`,
    platformUrl: platform.url,
  });
  const worker = await engine.startWorker({ concurrency: 1 });
  const task = await waitForWorkflowState(engine, workflow.id, 'succeeded');
  await worker.stop();
  return { engine, url, task, runs, stats: platform.stats() };
}

describe('partial success: assets uploaded, the body submit times out (R19)', () => {
  it('the retry resumes after the last checkpoint: no asset is uploaded twice, and one post exists', async () => {
    const { task, runs, stats, url } = await publishOnce('timeout');

    // Every asset was uploaded exactly once, and nothing asked for a second upload.
    expect(stats.assetsUploaded).toBe(assetNames.length);
    expect(stats.requests.uploadAsset).toEqual({ '201': assetNames.length });
    expect(stats.assets.map((asset) => asset.name)).toEqual([...assetNames]);
    // The first submit hung (no effect); the retry's submit published the post.
    expect(stats.requests.publishPost).toEqual({ hung: 1, '201': 1 });
    expect(stats.postsPublished).toBe(1);

    expect(runs).toEqual([
      { attempt: 1, checkpoints: [] },
      { attempt: 2, checkpoints: assetNames.map((name) => `asset:${name}`).sort() },
    ]);
    expect(edges(task).map((edge) => `${edge.reason}:${edge.attempt}`)).toEqual([
      'submitted:0',
      'lease_acquired:1',
      'retry_scheduled:1',
      'lease_acquired:2',
      'completed:2',
    ]);
    const retry = task.transitions.find((row) => row.reason === 'retry_scheduled');
    expect(retry).toMatchObject({ errorCategory: 'timeout', to: 'queued' });
    expect(retry?.errorSummary).toContain(`${submitTimeoutMs} ms`);

    // The checkpoints hold what each upload returned, and the output reuses them.
    const expected = Object.fromEntries(
      stats.assets.map((asset) => [asset.name, { id: asset.id, acceptanceId: asset.acceptanceId }]),
    );
    expect(task.checkpoints).toEqual(
      Object.fromEntries(assetNames.map((name) => [`asset:${name}`, expected[name]])),
    );
    expect(task.output).toEqual({ postId: stats.posts[0]?.id, assets: expected });
    expect(await logMismatches(url)).toEqual([]);
  });

  it('a submit that timed out after the platform performed it is repeated with the same key: still one post', async () => {
    const { task, stats } = await publishOnce('timeout_after_effect');

    expect(stats.assetsUploaded).toBe(assetNames.length);
    expect(stats.requests.uploadAsset).toEqual({ '201': assetNames.length });
    // The hung submit did publish; the retry's submit carried the same key and was replayed.
    expect(stats.postsPublished).toBe(1);
    expect(stats.requests.publishPost).toEqual({ hung: 1, '201': 1 });
    expect(stats.idempotentReplays).toBe(1);
    expect(stats.posts[0]?.idempotencyKey).toBe(`causeway:${task.id}`);
    expect(task.output).toMatchObject({ postId: stats.posts[0]?.id });
    expect(edges(task).map((edge) => edge.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'retry_scheduled',
      'lease_acquired',
      'completed',
    ]);
  });
});
