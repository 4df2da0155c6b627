import type { Kysely, Transaction } from 'kysely';
import type { CausewayDatabase } from '../../db/schema';
import type { EventOutcome, EventRequest } from '../decision/event-request';
import { type CompletedWait, storedEventWaitSpans, type WaitSpanContext } from './event-spans';
import { tracerRegistered } from './trace-context';

/**
 * The waits stored events completed in each open transaction (R57), to record once it commits:
 * a span for a wait whose edge rolled back would tell of a step that never moved. Keyed weakly:
 * a transaction that rolls back, or one no `transactionRecordingWaits` runs, leaves nothing.
 */
const completedIn = new WeakMap<Transaction<CausewayDatabase>, CompletedWait[]>();

/**
 * Notes the `event_received` requests among `requests` that were applied, in the transaction
 * that applied them: events stored before their waits (R37, R54). Nothing without a tracer.
 */
export function noteStoredEventWaits(
  tx: Transaction<CausewayDatabase>,
  requests: readonly EventRequest[],
  outcomes: readonly EventOutcome[],
): void {
  if (!tracerRegistered()) return;
  const waits = requests.flatMap((request, index): CompletedWait[] => {
    const outcome = outcomes[index];
    return request.event.type !== 'event_received' || outcome?.kind !== 'applied'
      ? []
      : [
          {
            eventId: request.event.eventId,
            workflowId: outcome.task.workflowId,
            taskId: outcome.taskId,
            step: outcome.task.step,
          },
        ];
  });
  if (waits.length === 0) return;
  const noted = completedIn.get(tx);
  if (noted === undefined) completedIn.set(tx, waits);
  else noted.push(...waits);
}

/**
 * Forgets the noted waits of `eventIds`: events a send stores and records itself
 * (`completedWaitSpans`), though a wait that started in its own decision met them stored.
 */
export function forgetWaitsOfEvents(
  tx: Transaction<CausewayDatabase>,
  eventIds: ReadonlySet<string>,
): void {
  const noted = completedIn.get(tx);
  if (noted === undefined) return;
  completedIn.set(
    tx,
    noted.filter((wait) => !eventIds.has(wait.eventId)),
  );
}

/**
 * Runs `work` in a transaction and, once it has committed, records the spans of the waits its
 * decisions completed with stored events (`storedEventWaitSpans`). Every transaction that may
 * decide a step into a wait runs through here; a caller's own transaction (a submit given one)
 * does not, and its waits are not recorded: the engine does not see it commit.
 */
export async function transactionRecordingWaits<Result>(
  context: WaitSpanContext & { readonly db: Kysely<CausewayDatabase> },
  work: (tx: Transaction<CausewayDatabase>) => Promise<Result>,
): Promise<Result> {
  const ran: { tx?: Transaction<CausewayDatabase> } = {};
  const result = await context.db.transaction().execute((tx) => {
    ran.tx = tx;
    return work(tx);
  });
  const waits = ran.tx === undefined ? undefined : completedIn.get(ran.tx);
  if (waits !== undefined) await storedEventWaitSpans(context, waits);
  return result;
}
