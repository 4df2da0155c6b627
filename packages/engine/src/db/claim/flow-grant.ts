import { sql, type Transaction } from 'kysely';
import { arrayLiteral } from '../array-literal';
import { preparedSql } from '../database';
import type { CausewayDatabase } from '../schema';
import { keyGrantCtes } from './concurrency-claim';
import { type RateLimitPlan, rateFitCtes, rateSpendCte } from './rate-claim';

/**
 * A candidate of a claim decided in full that a key (R50) or a rate limit (R51) holds back:
 * the key row's versions its snapshot read, and what it spends.
 */
export interface FlowCandidate {
  readonly id: string;
  readonly concurrency: {
    readonly group: string;
    readonly key: string;
    readonly grantVersion: string;
    readonly headVersion: string;
  } | null;
  readonly rate: { readonly name: string; readonly key: string; readonly cost: number } | null;
}

/**
 * Grants the keys and spends the rate limits of the candidates a claim decided in full would
 * lease (in claim order), in its transaction, as the one-statement claim does (`grantCtes`);
 * returns the ids of those it may lease. The claim's time `now` is the one its edges carry.
 */
export async function flowGrant(
  tx: Transaction<CausewayDatabase>,
  queue: string,
  candidates: readonly FlowCandidate[],
  rateLimits: RateLimitPlan,
  now: Date,
): Promise<ReadonlySet<string>> {
  if (candidates.length === 0) return new Set();
  const at = sql`${now.toISOString()}::timestamptz`;
  const rated = candidates.some((c) => c.rate !== null);
  const passed = rated ? sql`rate_passed` : sql`wanted`;
  const { rows } = await sql<{ id: string }>`
    ${preparedSql}
    with wanted as materialized (
      select * from unnest(
        ${arrayLiteral(candidates.map((c) => c.id))}::uuid[],
        ${arrayLiteral(candidates.map((c) => c.concurrency?.group ?? null))}::text[],
        ${arrayLiteral(candidates.map((c) => c.concurrency?.key ?? null))}::text[],
        ${arrayLiteral(candidates.map((c) => c.concurrency?.grantVersion ?? null))}::text[],
        ${arrayLiteral(candidates.map((c) => c.concurrency?.headVersion ?? null))}::bigint[],
        ${arrayLiteral(candidates.map((c) => c.rate?.name ?? null))}::text[],
        ${arrayLiteral(candidates.map((c) => c.rate?.key ?? null))}::text[],
        ${arrayLiteral(candidates.map((c) => c.rate?.cost ?? null))}::integer[]
      ) with ordinality as w(id, concurrency_group, concurrency_key, grant_version,
        head_version, rate_name, rate_key, rate_cost, position)
    ),
    ${rated ? rateFitCtes(rateLimits, sql`wanted`, at) : sql``}
    ${keyGrantCtes(queue, passed)},
    claimable as materialized (
      select r.* from ${passed} as r
      where r.concurrency_key is null or exists (
        select 1 from key_grant as k
        where k.concurrency_group = r.concurrency_group and k.concurrency_key = r.concurrency_key)
    )${
      rated
        ? sql`,
    ${rateSpendCte(sql`claimable`, at)}`
        : sql``
    }
    select id from claimable`.execute(tx);
  return new Set(rows.map((row) => row.id));
}
