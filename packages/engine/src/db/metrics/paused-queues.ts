import { sql } from 'kysely';

/** The paused queues (R53), by name: one row per pause, so the table stays small. */
export const pausedQueuesSql = sql`select queue from causeway_queue_pauses`;
