import { type AttemptView, attemptsSelection, attemptsTable } from '../attempt-views';
import { attributesOption, attributesText } from '../attribute-option';
import { type CommandSpec, type Invocation, reasonOption } from '../command';
import { CliError, type ExitKind, usageError } from '../exit-codes';
import { code, instant, oneLine } from '../format';
import { graphqlRequest } from '../graphql-client';
import { jsonOption, jsonOptions } from '../json-input';
import { fields, table } from '../table';
import {
  type ChildCountsView,
  childCountsSelection,
  childCountsText,
  parentSelection,
  type TreeParent,
} from '../tree-views';
import { type TaskResult, taskLine, taskResultFields, taskResultRefusal } from './task-results';

/** `submit`, `status`, `explain` and `cancel`: one workflow at a time. */

const statusQuery = `query CausewayStatus($id: ID!) {
  workflow(id: $id) {
    id name state idempotencyKey attributes createdAt updatedAt
    tasks {
      id step queue state attempt maxAttempts priority runAt leaseHolder leaseExpiresAt
      lastErrorCategory lastError
      ${attemptsSelection}
    }
    ${parentSelection}
    ${childCountsSelection}
  }
}`;

export interface StatusTask {
  id: string;
  step: string;
  queue: string;
  state: string;
  attempt: number;
  maxAttempts: number;
  priority: number;
  runAt: string | null;
  leaseHolder: string | null;
  leaseExpiresAt: string | null;
  lastErrorCategory: string | null;
  lastError: string | null;
  attempts: AttemptView[];
}
export interface StatusWorkflow {
  id: string;
  name: string;
  state: string;
  idempotencyKey: string | null;
  attributes: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  tasks: StatusTask[];
  parent: TreeParent | null;
  childCounts: ChildCountsView[];
}

/** The workflow, or a not-found error (the API answers null for an unknown id). */
export async function requireWorkflow<T>(
  invocation: Invocation,
  query: string,
  id: string,
): Promise<{ workflow: T }> {
  const data = await graphqlRequest<{ workflow: T | null }>(invocation.endpoint, query, { id });
  if (data.workflow === null) throw workflowNotFound(id);
  return data as { workflow: T };
}

export function workflowNotFound(id: string): CliError {
  return new CliError('not_found', 'NOT_FOUND', `no workflow has the id ${JSON.stringify(id)}`);
}

function renderStatus(workflow: StatusWorkflow, invocation: Invocation): string {
  const { style } = invocation.output;
  const now = invocation.now();
  const heading = fields([
    ['workflow', `${workflow.id}  ${workflow.name}  ${style.state(code(workflow.state))}`],
    ['created', instant(workflow.createdAt, now)],
    ['updated', instant(workflow.updatedAt, now)],
    ...(workflow.idempotencyKey === null
      ? []
      : [['idempotency key', workflow.idempotencyKey] as const]),
    ...(Object.keys(workflow.attributes).length === 0
      ? []
      : [['attributes', attributesText(workflow.attributes)] as const]),
    ...(workflow.parent === null ? [] : parentFields(workflow.parent)),
    ...workflow.childCounts.map(
      (counts) => [`children of ${counts.step}`, childCountsText(counts)] as const,
    ),
  ]);
  const rows = workflow.tasks.map((task) => [
    task.step,
    task.id,
    style.state(code(task.state)),
    `${task.attempt}/${task.maxAttempts}`,
    // R49: seconds of backlog it may jump in its queue; the default 0 is no priority.
    task.priority === 0 ? '-' : `${task.priority} s`,
    task.state === 'QUEUED' ? instant(task.runAt, now) : '-',
    task.state === 'LEASED' || task.state === 'CANCEL_REQUESTED' ? (task.leaseHolder ?? '-') : '-',
    task.lastError === null ? '-' : `${code(task.lastErrorCategory)}: ${oneLine(task.lastError)}`,
  ]);
  const steps = table(
    ['STEP', 'TASK', 'STATE', 'ATTEMPT', 'PRIORITY', 'NEXT RUN', 'HOLDER', 'LAST ERROR'],
    rows,
  );
  // R56: each claim of each step, with how it ended.
  const attempts = attemptsTable(workflow.tasks, now);
  return `${heading}\n\n${steps}${attempts === null ? '' : `\n\nattempts:\n${attempts}`}`;
}

/** A child's parent and root, as `status` lists them. */
function parentFields(parent: TreeParent): (readonly [string, string])[] {
  return [
    [
      'parent',
      `${parent.workflow.id}  ${parent.workflow.name}, step ${parent.step}, child #${parent.index}${parent.detached ? ' (detached)' : ''}`,
    ],
    ['root', `${parent.root.id}  ${parent.root.name} (depth ${parent.depth})`],
  ];
}

const status: CommandSpec = {
  name: 'status',
  summary:
    'a workflow, its parent and child counts, a table of its steps (state, attempt, priority, next run, holder, last error) and one of their attempts',
  args: [{ name: 'workflowId', required: true }],
  options: {},
  async run(invocation) {
    const data = await requireWorkflow<StatusWorkflow>(
      invocation,
      statusQuery,
      invocation.requiredArg('workflowId'),
    );
    invocation.output.result(data, () => renderStatus(data.workflow, invocation));
    return undefined;
  },
};

const explain: CommandSpec = {
  name: 'explain',
  summary: "a workflow's history as a narrative, one line per edge and a summary",
  args: [{ name: 'workflowId', required: true }],
  options: {},
  async run(invocation) {
    const data = await requireWorkflow<{ id: string; state: string; explanation: string }>(
      invocation,
      'query CausewayExplain($id: ID!) { workflow(id: $id) { id state explanation } }',
      invocation.requiredArg('workflowId'),
    );
    invocation.output.result(data, () => data.workflow.explanation);
    return undefined;
  },
};

const submit: CommandSpec = {
  name: 'submit',
  summary: 'admit a workflow by name with a JSON input',
  args: [{ name: 'name', required: true }],
  options: {
    ...jsonOptions('input', 'the workflow input (default {})'),
    'idempotency-key': {
      type: 'string',
      value: 'key',
      description: 'a repeat with the same key answers the first workflow',
    },
    priority: {
      type: 'string',
      value: 'seconds',
      description:
        'seconds of backlog its steps may jump in their queues, -86400 to 86400 (wins over each step’s own)',
    },
    attr: {
      type: 'string',
      value: 'key=value',
      multiple: true,
      description:
        'a searchable attribute of the workflow, typed as `workflows --attr` reads it (true/false, a number, "a string", else text)',
    },
  },
  async run(invocation) {
    const key = invocation.option('idempotency-key');
    const priority = priorityOption(invocation);
    const data = await graphqlRequest<{
      submitWorkflow: {
        deduplicated: boolean;
        workflow: { id: string; name: string; state: string };
        debounce: { superseded: string[]; dueAt: string } | null;
      };
    }>(
      invocation.endpoint,
      `mutation CausewaySubmit($name: String!, $input: JSON!, $key: String, $priority: Int, $attributes: JSON) {
        submitWorkflow(name: $name, input: $input, idempotencyKey: $key, priority: $priority, attributes: $attributes) {
          deduplicated workflow { id name state } debounce { superseded dueAt }
        }
      }`,
      {
        name: invocation.requiredArg('name'),
        input: jsonOption(invocation, 'input', {}),
        key: key ?? null,
        priority,
        attributes: attributesOption(invocation),
      },
    );
    const { workflow, deduplicated, debounce } = data.submitWorkflow;
    // R52: a debounced submit says what it replaced and when the survivor runs.
    const debounced =
      debounce === null
        ? ''
        : `, due ${debounce.dueAt}${debounce.superseded.length === 0 ? '' : `; superseded ${debounce.superseded.join(', ')}`}`;
    invocation.output.result(
      data,
      () =>
        `${deduplicated ? 'deduplicated: an earlier submit made' : 'submitted'} ${workflow.id} (${workflow.name}): ${code(workflow.state)}${debounced}`,
    );
    return undefined;
  },
};

/**
 * `--priority` as a whole number of seconds, or null when not given. The range is the
 * server's to check (BAD_USER_INPUT, `invalid_priority`), so the CLI and the API refuse the
 * same values with the same words.
 */
function priorityOption(invocation: Invocation): number | null {
  const value = invocation.option('priority');
  if (value === undefined) return null;
  const seconds = /^-?\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(seconds)) {
    throw usageError(`--priority must be a whole number of seconds, got ${value}`);
  }
  return seconds;
}

const cancel: CommandSpec = {
  name: 'cancel',
  summary: 'cancel every step of a workflow that can still stop (or one task with --task)',
  args: [{ name: 'id', required: true }],
  options: {
    task: { type: 'boolean', description: 'the id is a task id: cancel only that task' },
    ...reasonOption,
  },
  async run(invocation): Promise<ExitKind | undefined> {
    const id = invocation.requiredArg('id');
    const reason = invocation.requiredOption('reason');
    if (invocation.flag('task')) {
      const data = await graphqlRequest<{ cancelTask: { result: TaskResult } }>(
        invocation.endpoint,
        `mutation CausewayCancelTask($id: ID!, $reason: String) {
          cancelTask(id: $id, reason: $reason) { result { ${taskResultFields} } }
        }`,
        { id, reason },
      );
      const { result } = data.cancelTask;
      invocation.output.result(data, () => taskLine('cancel', result));
      return taskResultRefusal(result);
    }
    const data = await graphqlRequest<{
      cancelWorkflow: { workflowId: string; state: string; changed: boolean };
    }>(
      invocation.endpoint,
      `mutation CausewayCancel($id: ID!, $reason: String) {
        cancelWorkflow(id: $id, reason: $reason) { workflowId state changed }
      }`,
      { id, reason },
    );
    const answer = data.cancelWorkflow;
    // Nothing to stop in a workflow that already ended otherwise: the cancel did not apply.
    const refused = !answer.changed && (answer.state === 'SUCCEEDED' || answer.state === 'DEAD');
    invocation.output.result(data, () =>
      refused
        ? `cancel refused: workflow ${answer.workflowId} already ended ${code(answer.state)}`
        : `cancel ${answer.workflowId}: ${code(answer.state)}${answer.changed ? '' : ' (already; nothing changed)'}`,
    );
    return refused ? 'refused' : undefined;
  },
};

export const workflowCommands: readonly CommandSpec[] = [submit, status, explain, cancel];
