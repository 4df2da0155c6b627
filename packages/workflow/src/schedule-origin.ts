/**
 * The detail of the creation edges (`∅ → …`, `submitted`) of a workflow a schedule submitted,
 * and how `explain` words it (R40, R42): "submitted by schedule morning-digest for the 07:00
 * Europe/Berlin tick".
 */
export interface ScheduleOrigin {
  readonly schedule: string;
  readonly timezone: string;
  /** The tick's instant (ISO 8601, UTC); absent for a workflow an operator triggered by hand. */
  readonly tick?: string;
  readonly trigger?: 'manual';
  readonly operator?: string;
  readonly operatorReason?: string;
}

export function scheduleTickOrigin(name: string, tick: Date, timezone: string): ScheduleOrigin {
  return { schedule: name, tick: tick.toISOString(), timezone };
}

export function scheduleTriggerOrigin(
  name: string,
  timezone: string,
  operator: string,
  reason: string,
): ScheduleOrigin {
  return { schedule: name, timezone, trigger: 'manual', operator, operatorReason: reason };
}

/** ", submitted by schedule … tick" for an edge detail that names a schedule; "" otherwise. */
export function scheduleOriginPhrase(detail: Readonly<Record<string, unknown>> | null): string {
  const name = detail?.schedule;
  const timezone = detail?.timezone;
  if (typeof name !== 'string' || typeof timezone !== 'string') return '';
  if (detail?.trigger === 'manual') {
    const by = typeof detail.operator === 'string' ? ` by ${detail.operator}` : '';
    const why = typeof detail.operatorReason === 'string' ? `: "${detail.operatorReason}"` : '';
    return `, submitted by schedule ${name}, triggered${by}${why}`;
  }
  const tick = typeof detail?.tick === 'string' ? new Date(detail.tick) : null;
  if (tick === null || Number.isNaN(tick.getTime())) return `, submitted by schedule ${name}`;
  return `, submitted by schedule ${name} for the ${wallClock(tick, timezone)} ${timezone} tick`;
}

/** HH:MM on the clocks of `timezone`. */
function wallClock(at: Date, timezone: string): string {
  try {
    return new Intl.DateTimeFormat('en-GB', {
      timeZone: timezone,
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).format(at);
  } catch {
    return `${at.toISOString().slice(11, 16)} UTC`;
  }
}
