/**
 * The main job until the engine lands: validate the publish-note definition, print its
 * graph, and walk one run through the pure state machine to show the transition log and
 * its explanation. No database is involved.
 */
import {
  type Actor,
  applyTaskEvent,
  cancelWorkflowRun,
  checkAdmission,
  createWorkflowRun,
  describeWorkflow,
  explain,
  type PlannedTransition,
  type Transition,
  type WorkflowRun,
  workflowMermaid,
} from '@causeway/workflow';
import { publishNote } from './workflow';

const input = { noteId: 'note-42', version: 3, title: 'Hello', body: 'First post' };
const admission = checkAdmission(publishNote, input, undefined);
if (!admission.ok) throw new Error(`${admission.error.code}: ${admission.error.message}`);

console.log(describeWorkflow(publishNote));
console.log(`\nidempotency key for ${JSON.stringify(input)}:\n  ${admission.idempotencyKey}`);
console.log(`\n${workflowMermaid(publishNote)}`);

// A dry run through the pure machine: render times out once, then succeeds; review runs;
// an operator cancels while review is leased; the worker confirms at its next boundary.
let clockMs = Date.parse('2026-01-01T10:00:00Z');
const clock = () => ({ now: new Date(clockMs), random: () => 0.5 });
const worker: Actor = { kind: 'worker', name: 'demo-host/1/boot' };
const created = createWorkflowRun(
  publishNote,
  { workflowId: 'wf-1', taskIds: ['t-render', 't-review', 't-publish'] },
  clock().now,
);
let run: WorkflowRun = created.run;
const log: Transition[] = [];
const record = (rows: readonly PlannedTransition[]) => {
  for (const row of rows) log.push(toTransition(row, log.length + 1, new Date(clockMs)));
  clockMs += 1_000;
};
record(created.transitions);
const events: [string, Parameters<typeof applyTaskEvent>[3]][] = [
  ['t-render', { type: 'claim', actor: worker }],
  [
    't-render',
    { type: 'fail', actor: worker, category: 'timeout', summary: 'renderer did not answer in 30s' },
  ],
  ['t-render', { type: 'claim', actor: worker }],
  ['t-render', { type: 'complete', actor: worker }],
  ['t-review', { type: 'claim', actor: worker }],
];
for (const [taskId, event] of events) {
  const decision = applyTaskEvent(publishNote, run, taskId, event, clock());
  if (!decision.ok) throw new Error(`${decision.refusal.code}: ${decision.refusal.message}`);
  run = decision.run;
  record(decision.transitions);
}
const cancelled = cancelWorkflowRun(publishNote, run, { kind: 'operator', name: 'alice' }, clock());
run = cancelled.run;
record(cancelled.transitions);
const confirmed = applyTaskEvent(
  publishNote,
  run,
  't-review',
  { type: 'boundary', actor: worker },
  clock(),
);
if (!confirmed.ok) throw new Error(confirmed.refusal.message);
record(confirmed.transitions);

console.log(`\ndry run through the pure state machine:\n${explain(log).text}`);

function toTransition(row: PlannedTransition, id: number, at: Date): Transition {
  const base = { id: String(id), workflowId: 'wf-1', at };
  return row.kind === 'task'
    ? {
        ...base,
        taskId: row.taskId,
        step: row.step,
        from: row.edge.from,
        to: row.edge.to,
        reason: row.edge.reason,
        errorCategory: row.edge.errorCategory,
        errorSummary: row.edge.errorSummary,
        actor: row.edge.actor,
        attempt: row.edge.attempt,
        detail: row.edge.detail,
      }
    : {
        ...base,
        taskId: null,
        step: null,
        from: row.from,
        to: row.to,
        reason: row.reason,
        errorCategory: null,
        errorSummary: null,
        actor: row.actor,
        attempt: 0,
        detail: row.step === null ? null : { step: row.step },
      };
}
