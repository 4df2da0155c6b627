import type { WorkflowDefinition } from '@causeway/workflow';
import {
  defaultConcurrencyGroup,
  everyVersion,
  mapConcurrencyGroup,
} from '@causeway/workflow/internal';
import {
  type ConcurrencyKeyLoad,
  concurrencyGroupLoadList,
} from '../../db/concurrency/concurrency-key-loads';
import type { Db } from '../../db/database';
import { EngineError } from '../../errors';

export type { ConcurrencyKeyLoad };

/** A concurrency group as this engine's definitions declare it (R50). */
export interface DefinedConcurrencyGroup {
  readonly group: string;
  /** The limit its steps declare (the largest, should steps of one group disagree). */
  readonly limit: number;
  /** The steps whose tasks take its slots, as `workflow/step`, sorted. */
  readonly steps: readonly string[];
}

/** A concurrency group as operators see it (R50): its definition and its live keys. */
export interface ConcurrencyGroupView {
  readonly group: string;
  /**
   * The declared limit; for a group no definition of this engine declares, the largest
   * limit its busy keys stored.
   */
  readonly limit: number;
  /** Whether this engine's definitions declare the group. */
  readonly defined: boolean;
  readonly steps: readonly string[];
  /** How many keys have a slot held or a ready task waiting. */
  readonly keysBusy: number;
  /** Slots held, over all its keys. */
  readonly held: number;
  /** Ready tasks waiting, over all its keys. */
  readonly queued: number;
  /** The busiest keys, most held first, at most the number asked for. */
  readonly keys: readonly ConcurrencyKeyLoad[];
}

/** What `concurrencyGroups` shows of each group. */
export interface ConcurrencyGroupsRequest {
  /** The busiest keys shown per group: 1 to 500, default 50. */
  readonly keys?: number;
}

/** The engine's concurrency reads (R50). */
export interface ConcurrencyOperations {
  /**
   * Every group this engine's definitions declare and every group with a busy key in the
   * database, by name, with their busiest keys and those keys' holders.
   */
  concurrencyGroups(request?: ConcurrencyGroupsRequest): Promise<ConcurrencyGroupView[]>;
}

/** Holders shown per key: enough to name who holds a small limit, bounded for a large one. */
const holdersShown = 20;

export function concurrencyOperationsOf(
  db: Db,
  definitions: ReadonlyMap<string, WorkflowDefinition>,
): ConcurrencyOperations {
  return {
    concurrencyGroups: (request) => listConcurrencyGroups(db, definitions, request),
  };
}

/**
 * The groups the definitions declare: each step's `concurrency` (default group
 * `<workflow>/<step>`), and each map step's `concurrency`, whose group
 * `map:<workflow>/<step>` every step of its children takes.
 */
export function definedConcurrencyGroups(
  definitions: ReadonlyMap<string, WorkflowDefinition>,
): DefinedConcurrencyGroup[] {
  const groups = new Map<string, { limit: number; steps: Set<string> }>();
  const add = (group: string, limit: number, steps: readonly string[]) => {
    const entry = groups.get(group) ?? { limit, steps: new Set<string>() };
    entry.limit = Math.max(entry.limit, limit);
    for (const name of steps) entry.steps.add(name);
    groups.set(group, entry);
  };
  for (const definition of everyVersion(definitions)) {
    for (const step of definition.steps) {
      const option = step.concurrency;
      if (option !== undefined) {
        const group = option.group ?? defaultConcurrencyGroup(definition.name, step.name);
        add(group, option.limit, [`${definition.name}/${step.name}`]);
      }
      const map = step.map;
      if (map !== undefined && map.concurrency !== undefined && map.concurrency !== null) {
        const children = map.workflow.steps.map((child) => `${map.workflow.name}/${child.name}`);
        add(mapConcurrencyGroup(definition.name, step.name), map.concurrency, children);
      }
    }
  }
  return [...groups.entries()]
    .map(([group, entry]) => ({ group, limit: entry.limit, steps: [...entry.steps].sort() }))
    .sort((a, b) => compare(a.group, b.group));
}

export async function listConcurrencyGroups(
  db: Db,
  definitions: ReadonlyMap<string, WorkflowDefinition>,
  request: ConcurrencyGroupsRequest = {},
): Promise<ConcurrencyGroupView[]> {
  const keysShown = checkKeys(request.keys);
  const loads = new Map(
    (await concurrencyGroupLoadList(db, { keysShown, holdersShown })).map((load) => [
      load.group,
      load,
    ]),
  );
  const views: ConcurrencyGroupView[] = definedConcurrencyGroups(definitions).map((defined) => {
    const load = loads.get(defined.group);
    loads.delete(defined.group);
    return {
      ...defined,
      defined: true,
      keysBusy: load?.keysBusy ?? 0,
      held: load?.held ?? 0,
      queued: load?.queued ?? 0,
      keys: load?.keys ?? [],
    };
  });
  for (const load of loads.values()) {
    views.push({
      ...load,
      limit: Math.max(...load.keys.map((key) => key.limit ?? 0)),
      defined: false,
      steps: [],
    });
  }
  return views.sort((a, b) => compare(a.group, b.group));
}

function checkKeys(keys: unknown): number {
  if (keys === undefined || keys === null) return 50;
  if (typeof keys !== 'number' || !Number.isInteger(keys) || keys < 1 || keys > 500) {
    throw new EngineError('invalid_request', 'keys must be an integer from 1 to 500');
  }
  return keys;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
