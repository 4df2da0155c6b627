import type { Db } from '../../db/database';
import { type TaskTraceParent, taskTraceParents } from '../../db/tracing/trace-contexts';

/**
 * What the read found for one task: its parent (null when its workflow stored none), or the
 * read's error. Never a rejection: an attempt waiting for a slot holds it unobserved.
 */
export type TraceParentRead =
  | { readonly ok: true; readonly parent: TaskTraceParent | null }
  | { readonly ok: false; readonly error: unknown };

type Waiter = (read: TraceParentRead) => void;

/**
 * Reads the stored trace contexts of claimed tasks, one read for the tasks of one claim: the
 * worker makes a claim's attempts in one turn of the event loop, and the read goes out when
 * that turn ends. Asked only when a tracer provider is registered (R57).
 */
class TraceParentReader {
  private waiting: Map<string, Waiter[]> | null = null;

  constructor(private readonly db: Db) {}

  parentOf(taskId: string): Promise<TraceParentRead> {
    return new Promise((resolve) => {
      if (this.waiting === null) {
        this.waiting = new Map();
        queueMicrotask(() => void this.read());
      }
      const waiters = this.waiting.get(taskId);
      if (waiters === undefined) this.waiting.set(taskId, [resolve]);
      else waiters.push(resolve);
    });
  }

  private async read(): Promise<void> {
    const batch = this.waiting ?? new Map<string, Waiter[]>();
    this.waiting = null;
    let answer: (taskId: string) => TraceParentRead;
    try {
      const parents = await taskTraceParents(this.db, [...batch.keys()]);
      answer = (taskId) => ({ ok: true, parent: parents.get(taskId) ?? null });
    } catch (error) {
      answer = () => ({ ok: false, error });
    }
    for (const [taskId, waiters] of batch) for (const waiter of waiters) waiter(answer(taskId));
  }
}

const readers = new WeakMap<Db, TraceParentReader>();

/** Where the attempt of `taskId` hangs: its workflow's stored trace context, or null. */
export function traceParentOf(db: Db, taskId: string): Promise<TraceParentRead> {
  let reader = readers.get(db);
  if (reader === undefined) {
    reader = new TraceParentReader(db);
    readers.set(db, reader);
  }
  return reader.parentOf(taskId);
}
