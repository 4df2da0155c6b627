/** `/schedules`: every schedule with its next tick, its last run and that run's state. */
import { actionButton, actionDialogs } from './action-dialogs';
import { code, shortId, stateBadge, timeElement, workflowHref } from './format';
import type { ReadResult } from './graphql-reads';
import { html, type SafeHtml } from './html';
import { renderProblem } from './layout';

export const schedulesQuery = `query DashboardSchedules {
  schedules {
    name workflow cron timezone catchUp
    paused { at by reason }
    nextTickAt lastTickAt
    lastWorkflow { id state }
    history { kind operator reason at workflow { id } }
  }
}`;

interface ScheduleData {
  readonly name: string;
  readonly workflow: string;
  readonly cron: string;
  readonly timezone: string;
  readonly catchUp: string;
  readonly paused: { readonly at: string; readonly by: string; readonly reason: string } | null;
  readonly nextTickAt: string | null;
  readonly lastTickAt: string | null;
  readonly lastWorkflow: { readonly id: string; readonly state: string } | null;
  readonly history: readonly {
    readonly kind: string;
    readonly operator: string;
    readonly reason: string;
    readonly at: string;
    readonly workflow: { readonly id: string } | null;
  }[];
}

export interface SchedulesData {
  readonly schedules: readonly ScheduleData[];
}

function historyOf(schedule: ScheduleData, now: Date): SafeHtml {
  if (schedule.history.length === 0) return html``;
  return html`<details><summary>History (${schedule.history.length})</summary><ol class="history">${schedule.history.map(
    (entry) =>
      html`<li>${timeElement(entry.at, now)}: <code>${code(entry.kind)}</code> by <span class="actor">operator:${entry.operator}</span> — ${entry.reason}${
        entry.workflow === null
          ? ''
          : html` (<a href="${workflowHref(entry.workflow.id)}">${shortId(entry.workflow.id)}</a>)`
      }</li>`,
  )}</ol></details>`;
}

function row(schedule: ScheduleData, now: Date): SafeHtml {
  const subject = `schedule ${schedule.name}`;
  const pauseOrResume =
    schedule.paused === null
      ? actionButton('pause-schedule', 'Pause', subject, { name: schedule.name })
      : actionButton('resume-schedule', 'Resume', subject, { name: schedule.name });
  return html`<tr data-schedule="${schedule.name}">
  <th scope="row">${schedule.name}${historyOf(schedule, now)}</th>
  <td>${schedule.workflow}</td>
  <td><code>${schedule.cron}</code> <span class="zone">${schedule.timezone}</span>, catch-up ${code(schedule.catchUp)}</td>
  <td>${schedule.paused === null ? 'running' : html`<strong>paused</strong> by ${schedule.paused.by} ${timeElement(schedule.paused.at, now, 'relative')}: ${schedule.paused.reason}`}</td>
  <td>${timeElement(schedule.nextTickAt, now)}${schedule.nextTickAt === null ? '' : html` (${timeElement(schedule.nextTickAt, now, 'relative')})`}</td>
  <td>${timeElement(schedule.lastTickAt, now)}</td>
  <td>${schedule.lastWorkflow === null ? html`<span class="none">none yet</span>` : html`<a href="${workflowHref(schedule.lastWorkflow.id)}">${shortId(schedule.lastWorkflow.id)}</a> ${stateBadge(schedule.lastWorkflow.state)}`}</td>
  <td class="actions">${pauseOrResume} ${actionButton('trigger-schedule', 'Trigger now', subject, { name: schedule.name })}</td>
</tr>`;
}

export function renderSchedulesPage(result: ReadResult<SchedulesData>, now: Date): SafeHtml {
  let content: SafeHtml;
  if (!result.ok) content = renderProblem(result.error.code, result.error.message);
  else if (result.data.schedules.length === 0) content = html`<p>No schedules are stored.</p>`;
  else {
    content = html`<div class="scroll" tabindex="0" role="region" aria-label="Schedules table"><table class="schedules">
<caption>Schedules by name</caption>
<thead><tr><th scope="col">Schedule</th><th scope="col">Workflow</th><th scope="col">Cron</th><th scope="col">Status</th><th scope="col">Next tick</th><th scope="col">Last tick</th><th scope="col">Last run</th><th scope="col">Actions</th></tr></thead>
<tbody>${result.data.schedules.map((schedule) => row(schedule, now))}</tbody>
</table></div>`;
  }
  return html`<h1>Schedules</h1>
<section data-region="schedules" aria-label="Schedules">${content}</section>
${actionDialogs(['pause-schedule', 'resume-schedule', 'trigger-schedule'])}`;
}
