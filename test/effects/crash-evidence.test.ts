import type { Engine } from '@causeway/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { type Platform, startPlatform } from '../../examples/platform/server';
import { isMessage } from '../engine/fixtures/children';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import { reRunAfterLeaseExpiry } from '../helpers/task-edges';
import { type CrashInput, crashPublish } from './fixtures/effect-workflows';
import {
  captureLogger,
  edges,
  type LogLine,
  spawnEffectsWorker,
  waitForWorkflowState,
} from './fixtures/parent';

/**
 * SIGKILL after the external call, before the success commit (issue 4, rules R10, R20, R21):
 * a child worker process posts to the platform, then is killed; a fresh worker in this
 * process takes over after the lease expires. Evidence turns "maybe sent" into "sent, ask
 * for the outcome"; without it a non-reentrant step ends dead, never in a second post.
 */

const database = useTestDatabase();
/** Short leases so the killed child's lease runs out quickly. */
const leaseMs = 800;

let platform: Platform | undefined;
afterEach(async () => {
  await platform?.close();
  platform = undefined;
});

interface Run {
  readonly taskId: string;
  readonly attempt: number;
  readonly evidence: string | null;
}

/** The parent's engine: same workflow, its hooks only record each (re-)run. */
function parentEngine(url: string) {
  const runs: Run[] = [];
  const { logger, lines } = captureLogger();
  const engine = testEngine(url, {
    leaseMs,
    sweepIntervalMs: 100,
    pollIntervalMs: 100,
    logger,
    workflows: [
      crashPublish({
        async started(ctx) {
          runs.push({ taskId: ctx.taskId, attempt: ctx.attempt, evidence: ctx.evidence });
        },
        reached: async () => undefined,
      }),
    ],
  });
  return { engine, runs, lines };
}

/**
 * Submits one `crash-publish`, lets the child run it up to `crashAt` (the platform has
 * accepted the post by then) and SIGKILLs the child there. Returns the ids and the child's holder.
 */
async function crashChildAt(engine: Engine, input: Omit<CrashInput, 'platformUrl'>) {
  const url = database().url;
  const live = platform as Platform;
  const child = spawnEffectsWorker({ databaseUrl: url, platformUrl: live.url, leaseMs });
  const { holder: childHolder } = await child.ready(60_000);
  const { workflow } = await engine.submit('crash-publish', { ...input, platformUrl: live.url });
  const reached = await child.waitForMessage(
    isMessage('reached', (message) => message.workflowId === workflow.id),
    { description: `crash-publish reaching ${input.crashAt}` },
  );
  expect(reached.where).toBe(input.crashAt);

  // The platform performed the effect; the child still holds the lease (and renews it).
  expect(live.stats().postsPublished).toBe(1);
  const row = await engine.db
    .selectFrom('causeway_tasks')
    .select(['state', 'lease_holder', 'effect_started', 'evidence', 'attempt'])
    .where('id', '=', reached.taskId)
    .executeTakeFirstOrThrow();
  expect(row).toMatchObject({
    state: 'leased',
    lease_holder: childHolder,
    effect_started: true,
    attempt: 1,
    evidence: input.crashAt === 'after-evidence' ? live.stats().posts[0]?.acceptanceId : null,
  });

  const exit = await child.kill();
  expect(exit.signal).toBe('SIGKILL');
  return { workflowId: workflow.id, taskId: reached.taskId, childHolder, child };
}

/** The step's own log lines for this task, in order (what the re-run said it did). */
function stepMessages(lines: readonly LogLine[], taskId: string): string[] {
  return lines
    .filter((line) => line.taskId === taskId && line.step === 'publish')
    .map((line) => line.msg)
    .filter((msg) => msg.startsWith('evidence found') || msg.startsWith('confirmed by'));
}

describe('SIGKILL after the platform accepted, before the success commit', () => {
  for (const ignoreIdempotencyKeys of [false, true]) {
    const platformKind = ignoreIdempotencyKeys
      ? 'a platform that ignores idempotency keys'
      : 'a platform that honours idempotency keys';
    it(`with evidence recorded, a fresh worker asks for the outcome instead of posting again (${platformKind})`, async () => {
      platform = await startPlatform({ ignoreIdempotencyKeys });
      const url = database().url;
      const { engine, runs, lines } = parentEngine(url);
      await engine.migrate();
      const { workflowId, taskId, childHolder, child } = await crashChildAt(engine, {
        noteId: `evidence-${ignoreIdempotencyKeys}`,
        crashAt: 'after-evidence',
      });
      const acceptanceId = platform.stats().posts[0]?.acceptanceId as string;

      const worker = await engine.startWorker({ concurrency: 2 }); // with the sweeper
      const task = await waitForWorkflowState(engine, workflowId, 'succeeded', child.output);
      await worker.stop();

      // Exactly one post; the re-run asked for the submission and never posted again.
      const stats = platform.stats();
      expect(stats.postsPublished).toBe(1);
      expect(stats.posts).toHaveLength(1);
      expect(stats.requests.publishPost).toEqual({ '201': 1 });
      expect(stats.requests.getSubmission).toEqual({ '200': 1 });
      expect(stats.idempotentReplays).toBe(0);

      // The log tells the story: lease expired → re-run under the new holder → completed.
      expect(edges(task)).toEqual(reRunAfterLeaseExpiry(childHolder, engine.holder));
      // The re-run saw the evidence from the start, and the step said what it did with it.
      expect(runs).toEqual([{ taskId, attempt: 2, evidence: acceptanceId }]);
      expect(stepMessages(lines, taskId)).toEqual([
        `evidence found (${acceptanceId}): asking the platform for the outcome instead of posting again`,
        `confirmed by the platform: post ${stats.posts[0]?.id} is published`,
      ]);
      expect(lines.find((line) => line.msg.startsWith('evidence found'))).toMatchObject({
        taskId,
        workflowId,
        attempt: 2,
        holder: engine.holder,
        evidence: acceptanceId,
      });
      expect(task).toMatchObject({
        evidence: acceptanceId,
        attempt: 2,
        leaseHolder: null,
        output: { postId: stats.posts[0]?.id, acceptanceId, confirmedBy: 'evidence' },
      });

      const explanation = await engine.explain(workflowId);
      const story = explanation.lines.filter((line) => line.includes(' publish: '));
      expect(story.map((line) => line.slice(9))).toEqual([
        'publish: accepted and queued',
        `publish: leased by ${childHolder} (attempt 1)`,
        expect.stringMatching(
          `^publish: lease expired after the effect was accepted \\(evidence ${acceptanceId}\\): queued again to ask for its outcome, not to resubmit`,
        ),
        `publish: leased by ${engine.holder} (attempt 2)`,
        'publish: succeeded',
      ]);
      expect(explanation.workflowState).toBe('succeeded');
      expect(await logMismatches(url)).toEqual([]);
    }, 60_000);
  }

  it('without evidence, a non-reentrant step killed after the post ends dead (lease_expired_effect_uncertain); nothing is posted twice', async () => {
    // The platform cannot deduplicate: only the engine's refusal to guess prevents a second post.
    platform = await startPlatform({ ignoreIdempotencyKeys: true });
    const url = database().url;
    const { engine, runs } = parentEngine(url);
    await engine.migrate();
    const { workflowId, taskId, childHolder, child } = await crashChildAt(engine, {
      noteId: 'no-evidence',
      // Killed after the platform accepted, before the evidence could be recorded.
      crashAt: 'after-post',
    });

    const worker = await engine.startWorker({ concurrency: 2 });
    const task = await waitForWorkflowState(engine, workflowId, 'dead', child.output);
    // Stopping waits for anything still running: a re-run would have shown up in `runs`.
    await worker.stop();

    expect(edges(task)).toEqual([
      { from: null, to: 'queued', reason: 'submitted', actor: 'client', attempt: 0 },
      {
        from: 'queued',
        to: 'leased',
        reason: 'lease_acquired',
        actor: `worker:${childHolder}`,
        attempt: 1,
      },
      {
        from: 'leased',
        to: 'dead',
        reason: 'lease_expired_effect_uncertain',
        actor: `sweeper:${engine.holder}`,
        attempt: 1,
      },
    ]);
    expect(task).toMatchObject({
      id: taskId,
      effectStarted: true,
      evidence: null,
      attempt: 1,
      leaseHolder: null,
      lastErrorCategory: 'unknown',
    });
    expect(runs).toEqual([]);
    // A further sweep finds nothing; dead stays dead and the platform still has one post.
    expect(await engine.sweep()).toBe(0);
    const stats = (platform as Platform).stats();
    expect(stats.postsPublished).toBe(1);
    expect(stats.requests.publishPost).toEqual({ '201': 1 });
    expect((await engine.getWorkflow(workflowId))?.state).toBe('dead');
    expect((await engine.explain(workflowId)).text).toContain(
      'lease expired after its effect started: effect uncertain, dead (needs a human)',
    );
    expect(await logMismatches(url)).toEqual([]);
  }, 60_000);
});
