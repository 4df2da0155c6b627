import type { WorkflowDefinition } from '@causeway/workflow';
import { everyVersion } from '@causeway/workflow/internal';
import type { Db } from '../../db/database';
import {
  type QueuePause,
  type QueuePauseEvent,
  queuePauseEventList,
  queuePauseList,
  queuePauseWrite,
  queueResumeWrite,
} from '../../db/queues/queue-pauses';
import { EngineError } from '../../errors';

/** What an operator gives to pause a queue (R53): both are kept and shown. */
export interface QueuePauseRequest {
  readonly operator: string;
  readonly reason: string;
}

/** What an operator gives to resume a queue; the reason is optional. */
export interface QueueResumeRequest {
  readonly operator: string;
  readonly reason?: string;
}

/** A queue as operators see it (R53). */
export interface QueueView {
  readonly name: string;
  /** Who paused it, why and since when; null while claims take from it. */
  readonly paused: QueuePause | null;
  /** Its latest pauses and resumes, oldest first. */
  readonly history: readonly QueuePauseEvent[];
}

export interface QueueAnswer {
  readonly queue: QueueView;
  /**
   * True when this call paused or resumed it. A pause of a paused queue (or a resume of a
   * running one) writes nothing and answers false; the first pause's operator, reason and
   * time stay.
   */
  readonly changed: boolean;
}

/** The engine's queue operations (R53). */
export interface QueueOperations {
  /** The queues this engine's steps use and every paused one, with pause and history. */
  queues(): Promise<QueueView[]>;
  pauseQueue(name: string, request: QueuePauseRequest): Promise<QueueAnswer>;
  resumeQueue(name: string, request: QueueResumeRequest): Promise<QueueAnswer>;
}

export function queueOperationsOf(
  db: Db,
  definitions: ReadonlyMap<string, WorkflowDefinition>,
): QueueOperations {
  return {
    queues: () => listQueues(db, definitions),
    pauseQueue: (name, request) => pauseQueue(db, definitions, name, request),
    resumeQueue: (name, request) => resumeQueue(db, definitions, name, request),
  };
}

/** How many pauses and resumes of each queue a view shows. */
const historyShown = 20;

/** The queues an operator can see: those this engine's steps use, and every paused one. */
export async function listQueues(
  db: Db,
  definitions: ReadonlyMap<string, WorkflowDefinition>,
  only: string | null = null,
): Promise<QueueView[]> {
  const pauses = await queuePauseList(db);
  const names = new Set<string>(pauses.keys());
  for (const definition of everyVersion(definitions)) {
    for (const step of definition.steps) names.add(step.queue);
  }
  const shown = only === null ? [...names].sort() : [only];
  const events = await queuePauseEventList(db, shown, historyShown);
  return shown.map((name) => ({
    name,
    paused: pauses.get(name) ?? null,
    history: events.filter((event) => event.queue === name),
  }));
}

/** Pauses a queue (R53): claims that start after this returns take nothing from it. */
export async function pauseQueue(
  db: Db,
  definitions: ReadonlyMap<string, WorkflowDefinition>,
  name: string,
  request: QueuePauseRequest,
): Promise<QueueAnswer> {
  const queue = checkName(name);
  const operator = checkOperator(request?.operator);
  const reason = checkReason(request?.reason);
  const changed = await queuePauseWrite(db, { queue, operator, reason });
  return { queue: await viewOf(db, definitions, queue), changed };
}

/** Resumes a queue (R53): the next claims take from it again. */
export async function resumeQueue(
  db: Db,
  definitions: ReadonlyMap<string, WorkflowDefinition>,
  name: string,
  request: QueueResumeRequest,
): Promise<QueueAnswer> {
  const queue = checkName(name);
  const operator = checkOperator(request?.operator);
  const reason = request?.reason === undefined ? null : checkReason(request.reason);
  const changed = await queueResumeWrite(db, { queue, operator, reason });
  return { queue: await viewOf(db, definitions, queue), changed };
}

async function viewOf(
  db: Db,
  definitions: ReadonlyMap<string, WorkflowDefinition>,
  name: string,
): Promise<QueueView> {
  const [view] = await listQueues(db, definitions, name);
  if (view === undefined) throw new Error(`no view of queue ${name}`);
  return view;
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
    throw new EngineError('invalid_request', 'the queue name must be 1 to 200 characters');
  }
  return name;
}

function checkOperator(operator: unknown): string {
  const trimmed = typeof operator === 'string' ? operator.trim() : '';
  if (trimmed.length === 0 || trimmed.length > 200) {
    throw new EngineError('invalid_request', 'the operator name must be 1 to 200 characters');
  }
  return trimmed;
}

function checkReason(reason: unknown): string {
  const trimmed = typeof reason === 'string' ? reason.trim() : '';
  if (trimmed.length === 0 || trimmed.length > 1_000) {
    throw new EngineError('invalid_request', 'the reason must be 1 to 1,000 characters');
  }
  return trimmed;
}
