import { query } from './engine';

/** How many backends of the test's database wait for a lock (a barrier test's rendezvous). */
export async function lockWaiterCount(databaseUrl: string): Promise<number> {
  const [row] = await query<{ n: number }>(
    databaseUrl,
    `select count(*)::int as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock'`,
  );
  return row?.n ?? 0;
}
