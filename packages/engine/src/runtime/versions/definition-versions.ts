import {
  type VersionStatus,
  versionKey,
  versionStatus,
  type WorkflowRegistry,
  workflowVersion,
} from '@causeway/workflow/internal';
import type { Kysely } from 'kysely';
import { inOneSnapshot } from '../../db/read-snapshot';
import type { CausewayDatabase } from '../../db/schema';
import { versionsInFlightList } from '../../db/versions/versions-in-flight';
import { versionsServedList } from '../../db/versions/versions-served';
import { workerList } from '../../db/workers/worker-list';

/** One version of one workflow as operators see it (R54): `engine.versions()`, GraphQL `definitions`. */
export interface DefinitionVersionView {
  readonly name: string;
  /** Null for workflows stored before versions were recorded. */
  readonly version: string | null;
  /** The engine that answered defines it. */
  readonly defined: boolean;
  /** New submits to the engine that answered take it (its latest of the name). */
  readonly latest: boolean;
  /** Its workflows not yet terminal. */
  readonly inFlight: number;
  /** The live workers (holders) whose engine defines it, most recent heartbeat first. */
  readonly workers: readonly string[];
  readonly status: VersionStatus;
}

interface Gathered {
  name: string;
  version: string | null;
  defined: boolean;
  latest: boolean;
  latestOnLiveEngine: boolean;
  inFlight: number;
  workers: string[];
}

/**
 * Every version this engine defines, every version a live worker defines, every version a
 * worker served (so a drained one stays listed until retention removes it, when no worker
 * lists it and no kept workflow records it) and every version with workflows in
 * flight, read in one snapshot, by name in the order they were first met: this engine's, the
 * live workers', the served, the stored. A version is `serving` while a live engine (this one
 * included) lists it as its latest.
 */
export async function listDefinitionVersions(
  db: Kysely<CausewayDatabase>,
  definitions: WorkflowRegistry,
): Promise<DefinitionVersionView[]> {
  const { inFlight, workers, served } = await inOneSnapshot(db, async (tx) => ({
    inFlight: await versionsInFlightList(tx),
    workers: await workerList(tx, { includeStale: false }),
    served: await versionsServedList(tx),
  }));
  const gathered = new Map<string, Gathered>();
  const entry = (name: string, version: string | null): Gathered => {
    const key = version === null ? name : versionKey(name, version);
    let found = gathered.get(key);
    if (found === undefined) {
      found = {
        name,
        version,
        defined: false,
        latest: false,
        latestOnLiveEngine: false,
        inFlight: 0,
        workers: [],
      };
      gathered.set(key, found);
    }
    return found;
  };
  for (const definition of definitions.versions) {
    const found = entry(definition.name, workflowVersion(definition));
    found.defined = true;
    found.latest = definitions.get(definition.name) === definition;
    if (found.latest) found.latestOnLiveEngine = true;
  }
  for (const worker of workers) {
    if (!worker.live) continue;
    for (const known of worker.workflows) {
      // A row of an engine from before versions names no version: it serves none by name.
      if (known.version === undefined) continue;
      const found = entry(known.name, known.version);
      if (!found.workers.includes(worker.holder)) found.workers.push(worker.holder);
      if (known.latest === true) found.latestOnLiveEngine = true;
    }
  }
  for (const row of served) entry(row.name, row.version);
  for (const row of inFlight) entry(row.name, row.version).inFlight = row.inFlight;
  const names = [...new Set([...gathered.values()].map((found) => found.name))].sort();
  return names.flatMap((name) =>
    [...gathered.values()]
      .filter((found) => found.name === name)
      .map(({ latestOnLiveEngine, ...found }) => ({
        ...found,
        status: versionStatus({ latestOnLiveEngine, inFlight: found.inFlight }),
      })),
  );
}
