import type { CommandSpec } from '../command';
import { instant } from '../format';
import { graphqlRequest } from '../graphql-client';
import { table } from '../table';

/** `workers`: the worker registry (GraphQL `Query.workers`). */

export interface WorkerView {
  holder: string;
  host: string;
  pid: number;
  queues: { name: string; slots: number }[];
  workflows: { name: string; steps: string[] }[];
  version: string;
  startedAt: string;
  heartbeatAt: string;
  live: boolean;
}

const workers: CommandSpec = {
  name: 'workers',
  summary: 'registered workers: holder, host, pid, queues with slots, workflows, heartbeat',
  args: [],
  options: {
    'include-stale': {
      type: 'boolean',
      description: 'also the workers that stopped heartbeating (aged out)',
    },
  },
  async run(invocation) {
    const data = await graphqlRequest<{ workers: WorkerView[] }>(
      invocation.endpoint,
      `query CausewayWorkers($includeStale: Boolean) {
        workers(includeStale: $includeStale) {
          holder host pid queues { name slots } workflows { name steps }
          version startedAt heartbeatAt live
        }
      }`,
      { includeStale: invocation.flag('include-stale') },
    );
    const now = invocation.now();
    invocation.output.result(data, () =>
      data.workers.length === 0
        ? 'no live worker is registered'
        : table(
            [
              'HOLDER',
              'HOST',
              'PID',
              'QUEUES',
              'WORKFLOWS',
              'VERSION',
              'STARTED',
              'HEARTBEAT',
              'LIVE',
            ],
            data.workers.map((worker) => [
              worker.holder,
              worker.host,
              String(worker.pid),
              worker.queues.map((queue) => `${queue.name}×${queue.slots}`).join(',') || '-',
              worker.workflows.map((workflow) => workflow.name).join(',') || '-',
              worker.version,
              instant(worker.startedAt, now),
              instant(worker.heartbeatAt, now),
              worker.live ? 'yes' : 'no',
            ]),
          ),
    );
    return undefined;
  },
};

export const workerCommands: readonly CommandSpec[] = [workers];
