/**
 * One task in full: its attempts (each claim with how it ended, R56, then the task's own edges
 * by attempt), checkpoints, evidence, output, outbox messages, events, and the operator's
 * actions that apply to its state.
 */
import { actionButton } from './action-dialogs';
import { code, stateBadge, timeElement } from './format';
import { html, jsonText, type SafeHtml } from './html';
import {
  type BlockerData,
  finishedTaskStates,
  type TaskData,
  type TransitionData,
} from './workflow-query';
import { renderTimeline } from './workflow-timeline';

function item(term: string, value: SafeHtml | string | number | null): SafeHtml {
  if (value === null || value === '') return html``;
  return html`<dt>${term}</dt><dd>${value}</dd>`;
}

function jsonBlock(title: string, value: unknown): SafeHtml {
  if (value === null || value === undefined) return html``;
  if (typeof value === 'object' && Object.keys(value).length === 0) return html``;
  return html`<h4>${title}</h4><pre class="json">${jsonText(value)}</pre>`;
}

function actionsOf(task: TaskData): SafeHtml[] {
  const subject = `step ${task.step} (task ${task.id})`;
  const buttons: SafeHtml[] = [];
  if (task.state === 'WAITING' && task.waitingFor !== null) {
    buttons.push(
      actionButton('send-event', `Send ${task.waitingFor.name}`, subject, {
        name: task.waitingFor.name,
        key: task.waitingFor.key ?? '',
      }),
    );
  }
  if (task.state === 'DEAD')
    buttons.push(actionButton('replay-task', 'Replay', subject, { id: task.id }));
  if (!finishedTaskStates.includes(task.state)) {
    buttons.push(actionButton('cancel-task', 'Cancel step', subject, { id: task.id }));
  }
  return buttons;
}

function outboxTable(task: TaskData): SafeHtml {
  if (task.outbox.length === 0) return html``;
  return html`<h4>Outbox${task.sending ? ' (sending)' : ''}</h4>
<table class="outbox"><thead><tr><th scope="col">Message</th><th scope="col">Channel</th><th scope="col">State</th><th scope="col">Delivery attempts</th><th scope="col">Last error</th></tr></thead>
<tbody>${task.outbox.map(
    (message) =>
      html`<tr><td><code>${message.id}</code></td><td>${message.channel}</td><td>${message.state}</td><td>${message.attempts}</td><td>${message.lastError ?? ''}</td></tr>`,
  )}</tbody></table>`;
}

function eventsTable(task: TaskData, now: Date): SafeHtml {
  if (task.events.length === 0) return html``;
  return html`<h4>Events received</h4>
<table class="events"><thead><tr><th scope="col">Event</th><th scope="col">Key</th><th scope="col">Sent by</th><th scope="col">Reason</th><th scope="col">Received</th><th scope="col">Payload</th></tr></thead>
<tbody>${task.events.map(
    (event) =>
      html`<tr><td>${event.name} <span class="id">${event.id}</span></td><td>${event.key}</td><td class="actor">${event.sentBy}</td><td class="event-reason">${event.reason ?? ''}</td><td>${timeElement(event.receivedAt, now)}</td><td><code>${JSON.stringify(event.payload)}</code></td></tr>`,
  )}</tbody></table>`;
}

/** Each claim of the task (R56): holder, times, and how it ended; a stale one says what to do. */
function attemptsTable(task: TaskData, now: Date): SafeHtml {
  if (task.attempts.length === 0) return html``;
  return html`<table class="attempt-ledger"><thead><tr><th scope="col">Attempt</th><th scope="col">Epoch</th><th scope="col">Holder</th><th scope="col">Leased</th><th scope="col">Ended</th><th scope="col">Outcome</th><th scope="col">Reason</th></tr></thead>
<tbody>${task.attempts.map(
    (attempt) =>
      html`<tr class="attempt-${code(attempt.outcome)}"><td>${attempt.attempt}</td><td>${attempt.epoch}</td><td class="actor">${attempt.holder}</td><td>${timeElement(attempt.leasedAt, now)}</td><td>${timeElement(attempt.endedAt, now)}</td><td>${code(attempt.outcome).replaceAll('_', ' ')}${attempt.refusedAt === null ? '' : html`: its result came after its lease was lost and was refused ${timeElement(attempt.refusedAt, now)}; check the platform for its effect`}</td><td>${code(attempt.reason)}</td></tr>`,
  )}</tbody></table>`;
}

function waitText(task: TaskData, now: Date): SafeHtml | null {
  const wait = task.waitingFor;
  if (wait === null) return null;
  return html`${wait.name} with key ${wait.key === null ? html`<em>none (its key function failed)</em>` : html`<code>${wait.key}</code>`}, since ${timeElement(wait.since, now)}; gives up ${timeElement(wait.timeoutAt, now)}`;
}

export function renderTaskDetails(
  task: TaskData,
  transitions: readonly TransitionData[],
  blocker: BlockerData | undefined,
  now: Date,
): SafeHtml {
  const open = !finishedTaskStates.includes(task.state);
  const own = transitions.filter((row) => row.taskId === task.id);
  const lastError =
    task.lastError === null && task.lastErrorCategory === null
      ? null
      : html`<span class="error-category">${code(task.lastErrorCategory)}</span> ${task.lastError ?? ''}`;
  const buttons = actionsOf(task);
  return html`<details id="task-${task.id}" class="task" data-task-id="${task.id}" data-step="${task.step}"${open ? html` open` : ''}>
<summary><span class="step-name">${task.step}</span> ${stateBadge(task.state)} <span class="attempts">attempt ${task.attempt} of ${task.maxAttempts}</span></summary>
<div class="task-body">
${buttons.length === 0 ? '' : html`<p class="actions">${buttons}</p>`}
<dl class="facts">
  ${item('Task', html`<code>${task.id}</code>`)}
  ${item('Blocked', blocker === undefined ? null : html`<code class="blocker-code">${code(blocker.code)}</code> — ${blocker.message}`)}
  ${item('Queue', task.queue)}
  ${item('Attempt', `${task.attempt} of ${task.maxAttempts}`)}
  ${item('Replays', task.replayCount === 0 ? null : task.replayCount)}
  ${item('Runs at', task.runAt === null ? null : timeElement(task.runAt, now))}
  ${item('Lease', task.leaseHolder === null ? null : html`${task.leaseHolder}, expires ${timeElement(task.leaseExpiresAt, now)}`)}
  ${item('Waits for', waitText(task, now))}
  ${item('Last error', lastError)}
  ${item('Evidence', task.evidence === null ? null : html`<code>${task.evidence}</code>`)}
</dl>
${jsonBlock('Checkpoints', task.progress)}
${jsonBlock('Output', task.output)}
${outboxTable(task)}
${eventsTable(task, now)}
<h4>Attempts</h4>
${attemptsTable(task, now)}
${renderTimeline(own, now, { caption: `Edges of ${task.step}, by attempt`, withStep: false })}
</div>
</details>`;
}
