import type { ErrorCategory } from './error-categories';

/**
 * What a function the engine evaluates for a step (an event key, a map's list, a child's input) gave wrong (R58): it
 * threw, or returned a value the step cannot use. The step then ends `dead`
 * (`step_input_failed`) with this as its error, instead of waiting for nothing.
 */
export interface StepInputProblem {
  /** Which of the step's functions: `event_key`, a map's `list` (`over`) or `child_input`. */
  readonly input: 'event_key' | 'list' | 'child_input';
  readonly category: ErrorCategory;
  /** The error, in words: what the function threw, or why its value is refused. */
  readonly summary: string;
}
