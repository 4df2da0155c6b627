import type pg from 'pg';

/** Wakes workers (payload: a queue name, or `@outbox`). */
export const wakeupChannel = 'causeway_wakeup';
/** Announces new transition rows: one empty payload per statement (PostgreSQL folds repeats in a transaction); listeners re-read the log. */
export const transitionsChannel = 'causeway_transitions';

/** Subscribes a dedicated connection to a notification channel (one of the names above). */
export async function channelListen(client: pg.Client, channel: string): Promise<void> {
  if (!/^[a-z_]+$/.test(channel)) throw new RangeError(`not a channel name: ${channel}`);
  await client.query(`listen ${channel}`);
}

/** The wake-up payload that means "the outbox has work" (queue names start with a letter). */
export const outboxWakeup = '@outbox';
