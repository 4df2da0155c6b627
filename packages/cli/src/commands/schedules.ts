import { type CommandSpec, type Invocation, reasonOption } from '../command';
import { code, instant } from '../format';
import { graphqlRequest } from '../graphql-client';
import { table } from '../table';

/** `schedules` and the operator's pause, resume and trigger of one. */

const scheduleFields = `name workflow cron timezone catchUp
  paused { at by reason } nextTickAt lastTickAt lastWorkflow { id state }`;

export interface ScheduleView {
  name: string;
  workflow: string;
  cron: string;
  timezone: string;
  catchUp: string;
  paused: { at: string; by: string; reason: string } | null;
  nextTickAt: string | null;
  lastTickAt: string | null;
  lastWorkflow: { id: string; state: string } | null;
}

const schedules: CommandSpec = {
  name: 'schedules',
  summary: 'every stored schedule: cron, next tick, last run and its state, pause',
  args: [],
  options: {},
  async run(invocation) {
    const data = await graphqlRequest<{ schedules: ScheduleView[] }>(
      invocation.endpoint,
      `query CausewaySchedules { schedules { ${scheduleFields} } }`,
    );
    const now = invocation.now();
    const { style } = invocation.output;
    invocation.output.result(data, () =>
      data.schedules.length === 0
        ? 'no schedules'
        : table(
            ['NAME', 'WORKFLOW', 'CRON', 'TIME ZONE', 'NEXT TICK', 'LAST RUN', 'PAUSED'],
            data.schedules.map((view) => [
              view.name,
              view.workflow,
              view.cron,
              view.timezone,
              view.paused === null ? instant(view.nextTickAt, now) : '-',
              view.lastWorkflow === null
                ? '-'
                : `${view.lastWorkflow.id} ${style.state(code(view.lastWorkflow.state))}`,
              view.paused === null ? '-' : `by ${view.paused.by}: ${view.paused.reason}`,
            ]),
          ),
    );
    return undefined;
  },
};

type ScheduleMutation = 'pauseSchedule' | 'resumeSchedule';

function pauseOrResume(name: string, mutation: ScheduleMutation, verb: string): CommandSpec {
  return {
    name,
    summary:
      mutation === 'pauseSchedule'
        ? 'pause a schedule: it submits nothing until resumed'
        : 'resume a paused schedule (its missed ticks follow its catch-up)',
    args: [{ name: 'name', required: true }],
    options: { ...reasonOption },
    async run(invocation: Invocation) {
      const data = await graphqlRequest<
        Record<ScheduleMutation, { changed: boolean; schedule: ScheduleView }>
      >(
        invocation.endpoint,
        `mutation CausewaySchedule($name: String!, $reason: String!) {
          ${mutation}(name: $name, reason: $reason) { changed schedule { ${scheduleFields} } }
        }`,
        { name: invocation.requiredArg('name'), reason: invocation.requiredOption('reason') },
      );
      const answer = data[mutation];
      invocation.output.result(
        data,
        () =>
          `${answer.schedule.name} ${answer.changed ? verb : `was already ${verb}; nothing changed`}` +
          (answer.schedule.paused === null
            ? `; next tick ${instant(answer.schedule.nextTickAt, invocation.now())}`
            : ''),
      );
      return undefined;
    },
  };
}

const trigger: CommandSpec = {
  name: 'trigger-schedule',
  summary: 'submit one workflow of a schedule now, paused or not',
  args: [{ name: 'name', required: true }],
  options: { ...reasonOption },
  async run(invocation) {
    const data = await graphqlRequest<{
      triggerSchedule: {
        schedule: { name: string };
        workflow: { id: string; name: string; state: string };
      };
    }>(
      invocation.endpoint,
      `mutation CausewayTrigger($name: String!, $reason: String!) {
        triggerSchedule(name: $name, reason: $reason) { schedule { name } workflow { id name state } }
      }`,
      { name: invocation.requiredArg('name'), reason: invocation.requiredOption('reason') },
    );
    const { schedule, workflow } = data.triggerSchedule;
    invocation.output.result(
      data,
      () =>
        `triggered ${schedule.name}: workflow ${workflow.id} (${workflow.name}): ${code(workflow.state)}`,
    );
    return undefined;
  },
};

export const scheduleCommands: readonly CommandSpec[] = [
  schedules,
  pauseOrResume('pause-schedule', 'pauseSchedule', 'paused'),
  pauseOrResume('resume-schedule', 'resumeSchedule', 'resumed'),
  trigger,
];
