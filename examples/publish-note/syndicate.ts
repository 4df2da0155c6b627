/**
 * publish-to-platform: one platform's copy of a published note, started once per platform by
 * publish-note's map step `syndicate` (R44). A platform whose API is gone fails for good
 * (`not_found`, never retried); publish-note tolerates one such failure and lists each
 * platform's outcome. Posts spend the platform account's rate limit (R51), and a 429 pauses
 * that account for every post until its Retry-After.
 */
import { modeHeader } from '@causeway/example-platform/server.ts';
import { rateLimit, StepError, snooze, workflow } from '@causeway/workflow';
import { z } from 'zod';
import { retryAfterOf } from './retry-after';

/** Each platform account takes at most two posts a second (R51), whoever posts them. */
export const platformApiLimit = rateLimit({ name: 'platform-api', limit: 2, periodMs: 1_000 });

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
      rateLimit: { name: platformApiLimit.name, key: (ctx) => ctx.input.platform },
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
        // Mastodon answers the first post 429 with Retry-After: 1 (the fake platform's mode).
        const busy = platform === 'mastodon' && ctx.attempt === 1;
        const response = await fetch(`${platformUrl}/posts`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'idempotency-key': ctx.idempotencyKey,
            ...(busy ? { [modeHeader]: '429;retry-after=1' } : {}),
          },
          body: JSON.stringify({ noteId, version, title: `${title} (${platform})`, html: title }),
          signal: ctx.signal,
        });
        if (response.status === 429) {
          // The account is paused for every post until then, and this one retries then.
          const retryAfterMs = retryAfterOf(response.headers.get('retry-after'));
          throw new StepError('throttled', `${platform}: 429 Too Many Requests`, {
            ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
          });
        }
        if (!response.ok) throw new StepError('unavailable', `${platform}: ${response.status}`);
        const post = (await response.json()) as { url?: string };
        return { platform, url: post.url ?? null };
      },
    })
    .build();
}
