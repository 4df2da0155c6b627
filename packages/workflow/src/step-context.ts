import type { DeepReadonly } from './deep-freeze';

/** A pino-compatible logging function: `log(message)` or `log(fields, message)`. */
export interface LogFunction {
  (message: string): void;
  (fields: Record<string, unknown>, message?: string): void;
}

/** The logger a step gets; pino's Logger satisfies it. Lines carry workflow, task, attempt, holder. */
export interface StepLogger {
  readonly debug: LogFunction;
  readonly info: LogFunction;
  readonly warn: LogFunction;
  readonly error: LogFunction;
}

/** What a step's `run` receives (public surfaces, docs/rules.md). Implemented by the engine. */
export interface StepContext<TInput = unknown> {
  readonly workflowId: string;
  readonly taskId: string;
  readonly step: string;
  /** The workflow's input, validated at admission and deeply frozen (R30): writes throw. */
  readonly input: DeepReadonly<TInput>;
  /** Outputs of the upstream steps (direct or not), by step name. */
  readonly results: Readonly<Record<string, unknown>>;
  /** 1 for the first run, counting within the current replay round. */
  readonly attempt: number;
  /** Aborted when the lease is lost, a cancel is requested, the attempt times out or the service stops. */
  readonly signal: AbortSignal;
  /** Stable across attempts: derived from the task id, for the external system (R20). */
  readonly idempotencyKey: string;
  /** Checkpoints confirmed by earlier attempts, by name (R19). */
  readonly checkpoints: Readonly<Record<string, unknown>>;
  /** Records progress for status queries (not a state change). */
  progress(value: Readonly<Record<string, unknown>> | number): Promise<void>;
  /** Persists a checkpoint by conditional update; it also marks "effect started" (R10). */
  checkpoint(name: string, data?: unknown): Promise<void>;
  /** A side-effect boundary: marks "effect started" and confirms a pending cancel by throwing. */
  boundary(): Promise<void>;
  /**
   * Persists the external acceptance id of this step's effect in its own transaction, before
   * the step goes on (R21). It also marks "effect started".
   */
  recordEvidence(externalId: string): Promise<void>;
  /** Evidence recorded by this or an earlier attempt: ask for that outcome, never resubmit. */
  readonly evidence: string | null;
  readonly logger: StepLogger;
}
