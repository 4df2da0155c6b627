import { defineWorkflow, step } from '@causeway/workflow';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { z } from 'zod';
import { type PgBouncer, startPgBouncer } from '../../scripts/pgbouncer';
import { query } from '../helpers/engine';

/**
 * One PgBouncer (transaction pooling) per test file, in front of the server the test
 * databases are on; call at the top level, then use the getter inside tests. When it cannot
 * start (PgBouncer missing, say), each test fails with the reason: none is skipped.
 */
export function usePgBouncer(poolSize: number): () => PgBouncer {
  let pooler: PgBouncer | undefined;
  let failure: unknown;
  beforeAll(async () => {
    try {
      pooler = await startPgBouncer({ serverUrl: inject('adminDatabaseUrl'), poolSize });
    } catch (error) {
      failure = error;
    }
  });
  afterAll(async () => {
    await pooler?.stop();
  });
  return () => {
    if (failure !== undefined) throw failure;
    if (pooler === undefined) throw new Error('usePgBouncer(): the pooler is not running yet');
    return pooler;
  };
}

/** Transactions PgBouncer has relayed to `database` (its admin console's `SHOW STATS`). */
export async function pooledTransactions(pooler: PgBouncer, database: string): Promise<number> {
  // The admin console speaks only the simple protocol: a query without parameters.
  const client = new pg.Client({ connectionString: pooler.adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ database: string; total_xact_count: string }>(
      'SHOW STATS',
    );
    return Number(rows.find((row) => row.database === database)?.total_xact_count ?? 0);
  } finally {
    await client.end();
  }
}

export const oneStep = defineWorkflow({
  name: 'pooled-one-step',
  input: z.object({ i: z.number() }),
  steps: { only: step({ run: () => ({ ok: true }) }) },
});

export const threeSteps = defineWorkflow({
  name: 'pooled-three-steps',
  input: z.object({ i: z.number() }),
  steps: {
    a: step({ run: () => 1 }),
    b: step({ after: ['a'], run: () => 2 }),
    c: step({ after: ['b'], run: () => 3 }),
  },
});

/** How many workflows of the database are in each state. */
export async function workflowStates(url: string): Promise<Record<string, number>> {
  const rows = await query<{ state: string; n: number }>(
    url,
    'select state, count(*)::int as n from causeway_workflows group by state',
  );
  return Object.fromEntries(rows.map((row) => [row.state, row.n]));
}
