/**
 * Priority (R49): seconds of backlog a task may jump. Among due tasks of a queue, claims take
 * the smallest `run_at − priority` first, so a task never goes ahead of work that has waited
 * longer than its own priority, and is never claimed before its `run_at`.
 */
export const priorityLimits = Object.freeze({ min: -86_400, max: 86_400 });

/** What is wrong with a priority, or null: an integer of seconds within `priorityLimits`. */
export function priorityProblem(priority: unknown): string | null {
  const { min, max } = priorityLimits;
  if (
    typeof priority !== 'number' ||
    !Number.isInteger(priority) ||
    priority < min ||
    priority > max
  ) {
    return `priority must be an integer number of seconds from ${min} to ${max}, got ${String(priority)}`;
  }
  return null;
}
