import { type CommandSpec, reasonOption } from '../command';
import { code } from '../format';
import { graphqlRequest } from '../graphql-client';
import { jsonOption, jsonOptions } from '../json-input';

/** `send-event`: an event by name and key, completing the steps that wait for it. */

interface SendEventAnswer {
  sendEvent: {
    eventId: string;
    receivedAt: string;
    deduplicated: boolean;
    tasks: { id: string; workflowId: string; step: string; state: string }[];
  };
}

const sendEvent: CommandSpec = {
  name: 'send-event',
  summary: 'store an event and complete every step waiting for its name and key',
  args: [
    { name: 'name', required: true },
    { name: 'key', required: true },
  ],
  options: {
    ...jsonOptions('payload', 'the event payload (default {})'),
    'idempotency-key': {
      type: 'string',
      value: 'key',
      description: 'a repeat with the same key (per event name) stores nothing again',
    },
    ...reasonOption,
  },
  async run(invocation) {
    const data = await graphqlRequest<SendEventAnswer>(
      invocation.endpoint,
      `mutation CausewaySendEvent($name: String!, $key: String!, $payload: JSON!, $idempotencyKey: String, $reason: String) {
        sendEvent(name: $name, key: $key, payload: $payload, idempotencyKey: $idempotencyKey, reason: $reason) {
          eventId receivedAt deduplicated tasks { id workflowId step state }
        }
      }`,
      {
        name: invocation.requiredArg('name'),
        key: invocation.requiredArg('key'),
        payload: jsonOption(invocation, 'payload', {}),
        idempotencyKey: invocation.option('idempotency-key') ?? null,
        reason: invocation.requiredOption('reason'),
      },
    );
    const answer = data.sendEvent;
    invocation.output.result(data, () => {
      const head = `event ${answer.eventId} ${answer.deduplicated ? 'was already stored' : 'stored'} at ${answer.receivedAt}`;
      if (answer.tasks.length === 0)
        return `${head}; no step waits for it yet: kept for later waiters`;
      const completed = answer.tasks.map(
        (task) => `  ${task.workflowId} ${task.step}: ${code(task.state)}`,
      );
      return [`${head}; completed:`, ...completed].join('\n');
    });
    return undefined;
  },
};

export const eventCommands: readonly CommandSpec[] = [sendEvent];
