/**
 * publish-to-platform: one platform's copy of a published note, started once per platform by
 * publish-note's map step `syndicate` (R44). A platform whose API is gone fails for good
 * (`not_found`, never retried); publish-note tolerates one such failure and lists each
 * platform's outcome.
 */
import { StepError, snooze, workflow } from '@causeway/workflow';
import { z } from 'zod';

/** Platforms that no longer take posts: their child ends dead, and the parent says so. */
export const retiredPlatforms: ReadonlySet<string> = new Set(['myspace']);

export const syndicateInput = z.object({
  noteId: z.string(),
  version: z.number().int(),
  platform: z.string(),
  title: z.string(),
});

export function publishToPlatform(platformUrl: string) {
  return workflow({ name: 'publish-to-platform', input: syndicateInput })
    .step('post', {
      queue: 'network',
      // One post at a time per platform account, across every note (R50).
      concurrency: { key: (ctx) => ctx.input.platform, limit: 1, group: 'platform-posts' },
      reentrant: false,
      maxAttempts: 3,
      timeoutMs: 30_000,
      run: async (ctx) => {
        const { platform, noteId, version, title } = ctx.input;
        if (retiredPlatforms.has(platform)) {
          throw new StepError('not_found', `${platform} retired its posting API`);
        }
        // Bluesky asks for a moment the first time: the step snoozes, and publish-note's `why`
        // follows its tree down to this child's blocker.
        if (platform === 'bluesky' && ctx.checkpoints.asked === undefined) {
          await ctx.checkpoint('asked');
          return snooze({ forMs: 1_500, reason: 'bluesky asked to retry in 1.5 s' });
        }
        await ctx.boundary(); // a cancel is confirmed here, before the post
        const response = await fetch(`${platformUrl}/posts`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': ctx.idempotencyKey },
          body: JSON.stringify({ noteId, version, title: `${title} (${platform})`, html: title }),
          signal: ctx.signal,
        });
        if (!response.ok) throw new StepError('unavailable', `${platform}: ${response.status}`);
        const post = (await response.json()) as { url?: string };
        return { platform, url: post.url ?? null };
      },
    })
    .build();
}
