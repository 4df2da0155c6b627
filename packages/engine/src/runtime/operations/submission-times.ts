import type { Prepared } from './prepared';

/** A task's deadline from acceptance, no later than its parent's (R46). */
export function cappedDeadline(deadlineInMs: number | null, item: Prepared): number | null {
  const cap = item.deadlineCapMs ?? null;
  if (cap === null) return deadlineInMs;
  return deadlineInMs === null ? cap : Math.min(deadlineInMs, cap);
}

/** When a root of a submit with `runAt` runs: then, plus its own step delay (in its detail). */
export function rootRunAt(runAt: Date, detail: Readonly<Record<string, unknown>> | null): string {
  const stepDelayMs = typeof detail?.delayMs === 'number' ? detail.delayMs : 0;
  return new Date(runAt.getTime() + stepDelayMs).toISOString();
}
