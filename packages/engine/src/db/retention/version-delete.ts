import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { CausewayDatabase } from '../schema';

/**
 * Whether a row of the worker registry lists the version row `v` (live or stale: a stale row
 * may heartbeat again without registering, and heartbeats prune it an hour after it went stale).
 */
const listedByRegistrySql = sql<boolean>`exists (
  select 1 from causeway_workers as k
   where k.workflows @> jsonb_build_array(jsonb_build_object('name', v.name, 'version', v.version)))`;

/** The versions no registry row lists: retention's candidates, read without a lock. */
export function unlistedVersionsSql(): RawBuilder<{ name: string; version: string }> {
  return sql<{ name: string; version: string }>`
    select v.name, v.version from causeway_workflow_versions as v
     where not ${listedByRegistrySql}
     order by v.name, v.version`;
}

/**
 * Of `versions`, those no registry row lists still, locked (SKIP LOCKED: one a worker is
 * registering right now is left for the next run).
 */
export function unlistedVersionsLockSql(
  versions: readonly { readonly name: string; readonly version: string }[],
): RawBuilder<{ name: string; version: string }> {
  return sql<{ name: string; version: string }>`
    select v.name, v.version from causeway_workflow_versions as v
     join unnest(${versions.map((each) => each.name)}::text[],
                 ${versions.map((each) => each.version)}::text[]) as given(name, version)
       on v.name = given.name and v.version = given.version
     where not ${listedByRegistrySql}
     order by v.name, v.version
     for update of v skip locked`;
}

/**
 * Whether a workflow records `version` of `name`: one scan that ends at the version's first
 * workflow. The version column has no index (0036: it would cost every submit), so this is
 * the cost of the rule: a version with no workflow left reads the workflows of its name (by
 * the `(name, idempotency_key)` index, or the table when the name is most of it) once, in the
 * run that removes it; one with kept workflows reads until the first of them, in each run
 * while no worker lists it. One statement per version, its name and version bound as
 * constants, so the plan is made for that name's share of the table (a probe correlated to
 * the version rows would be planned for an average name, or as a hash of the whole table).
 */
export function versionRecordedSql(name: string, version: string): RawBuilder<{ found: 1 }> {
  return sql<{ found: 1 }>`
    select 1 as found from causeway_workflows as w
     where w.name = ${name} and w.version = ${version}
     limit 1`;
}

/** Of the locked `versions`, deletes those that still no registry row lists. */
export function unlistedVersionsDeleteSql(
  versions: readonly { readonly name: string; readonly version: string }[],
): RawBuilder<{ name: string; version: string }> {
  return sql<{ name: string; version: string }>`
    delete from causeway_workflow_versions as v
     using unnest(${versions.map((each) => each.name)}::text[],
                  ${versions.map((each) => each.version)}::text[]) as locked(name, version)
     where v.name = locked.name and v.version = locked.version
       and not ${listedByRegistrySql}
     returning v.name, v.version`;
}

/**
 * Removes the rows of `causeway_workflow_versions` (R54) that no worker serves and no kept
 * workflow records (docs/retention.md): a version long gone from every deploy is no longer
 * listed as `drained` forever. The probes of the workflows run first, outside any transaction,
 * so a worker that registers meanwhile never waits for them. Then, in one transaction, the
 * rows are locked, and the delete's snapshot is taken after the locks are held: a worker's
 * registration that wrote one of them (its registry row and the version row commit together)
 * is either seen there, or waits for this short transaction and then writes the row again.
 */
export async function unlistedVersionsDelete(
  db: Kysely<CausewayDatabase>,
): Promise<{ name: string; version: string }[]> {
  const { rows: candidates } = await unlistedVersionsSql().execute(db);
  const unrecorded: typeof candidates = [];
  for (const each of candidates) {
    const { rows } = await versionRecordedSql(each.name, each.version).execute(db);
    if (rows.length === 0) unrecorded.push(each);
  }
  if (unrecorded.length === 0) return [];
  return db.transaction().execute(async (tx) => {
    const { rows: locked } = await unlistedVersionsLockSql(unrecorded).execute(tx);
    if (locked.length === 0) return [];
    const { rows } = await unlistedVersionsDeleteSql(locked).execute(tx);
    return rows;
  });
}
