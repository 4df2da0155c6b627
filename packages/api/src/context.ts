import type { Engine, ReadModel } from '@causeway/engine';
import type { WorkflowDefinition } from '@causeway/workflow';
import type { QueryLimits } from './limits';
import type { Loaders } from './loaders';
import type { MutationMemo } from './mutation-memo';
import type { TransitionFeed } from './transition-feed';

/** What every resolver can reach; one per API process. */
export interface ApiServices {
  readonly engine: Engine;
  /** Reads on the primary: mutation payloads, the transition stream, the metrics. */
  readonly readModel: ReadModel;
  readonly feed: TransitionFeed;
  // biome-ignore lint/suspicious/noExplicitAny: each definition has its own input schema type.
  readonly definitions: ReadonlyMap<string, WorkflowDefinition<any>>;
  readonly limits: QueryLimits;
  readonly memo: MutationMemo;
}

/** The GraphQL context of one operation. */
export interface ApiContext {
  /** The operator named by the verified bearer token; null without one. Never from arguments. */
  readonly operator: string | null;
  /**
   * Where this operation reads: the replica for a query it may answer (packages/api/src/replica),
   * the primary otherwise. `loaders` read from the same place.
   */
  readonly reads: ReadModel;
  readonly loaders: Loaders;
  readonly services: ApiServices;
  /** Aborted when the HTTP client goes away: matters to a submit only until it commits (R6). */
  readonly signal: AbortSignal | undefined;
}
