import type { z } from 'zod';
import type { DeepReadonly } from './deep-freeze';

/** What an event step's key function reads: the workflow's input and its upstream results. */
export interface EventKeyContext<
  TInput = unknown,
  TResults extends Readonly<Record<string, unknown>> = Readonly<Record<string, unknown>>,
> {
  readonly input: DeepReadonly<TInput>;
  readonly results: TResults;
}

/** An event step's wait as the engine reads it (R37). */
export interface EventWait {
  /** The event's name, e.g. `note.approved`. */
  readonly name: string;
  /** The key the event must carry, computed when the step starts waiting. */
  readonly key: (context: EventKeyContext) => string;
  /** Validates an event's payload (R38); the step's output is the parsed payload. */
  readonly payload: z.ZodType | null;
  readonly timeoutMs: number;
  /** The output of a wait that timed out; null: the step ends `dead` (`event_timeout`). */
  readonly onTimeout: { readonly output: unknown } | null;
}
