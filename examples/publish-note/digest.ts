import { schedule, workflow } from '@causeway/workflow';
import { z } from 'zod';

/**
 * A digest of the notes, submitted by a schedule every minute in Europe/Berlin (R40): one
 * workflow per tick however many engines run, each saying which tick submitted it.
 */
export const noteDigest = workflow({
  name: 'note-digest',
  input: z.object({ channel: z.string() }),
})
  .step('compile', {
    run: (ctx) => {
      const at = new Date().toISOString();
      console.log(`[digest] ${at} workflow ${ctx.workflowId} compiled for ${ctx.input.channel}`);
      return { channel: ctx.input.channel, compiledAt: at };
    },
  })
  .build();

export const digestEveryMinute = schedule({
  name: 'digest-every-minute',
  workflow: noteDigest,
  cron: '* * * * *',
  timezone: 'Europe/Berlin',
  input: { channel: 'editors' },
  catchUp: 'latest',
});
