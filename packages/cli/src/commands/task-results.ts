import type { ExitKind } from '../exit-codes';
import { code } from '../format';

/** The fields of a TaskOperationResult the operation commands ask for (and print as JSON). */
export const taskResultFields = 'taskId state changed reason refusal message';

export interface TaskResult {
  taskId: string;
  state: string;
  changed: boolean;
  reason: string;
  refusal: string | null;
  message: string | null;
}

/** `refused` when the API answered that nothing changed, and why. */
export function taskResultRefusal(result: TaskResult): ExitKind | undefined {
  return result.refusal === null ? undefined : 'refused';
}

/** One line for an operation's answer on a task. */
export function taskLine(operation: string, result: TaskResult): string {
  const head = `${operation} task ${result.taskId}: ${code(result.state)} (${code(result.reason)})`;
  if (result.refusal !== null) {
    return `${operation} refused: ${result.refusal}${result.message === null ? '' : ` — ${result.message}`}; task ${result.taskId} stays ${code(result.state)}`;
  }
  return result.changed ? head : `${head}, nothing changed`;
}
