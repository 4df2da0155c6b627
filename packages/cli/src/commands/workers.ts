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
  /**
   * Each workflow version its engine defines (R54), so claims, sweeps and decides for; `latest`:
   * new submits on that engine take it. `version` is null in a row from before versions.
   */
  workflows: { name: string; version: string | null; latest: boolean; steps: string[] }[];
  /** The app's and the engine's version ("1.4.2 (causeway 0.1.0)"), not a workflow's. */
  version: string;
  startedAt: string;
  heartbeatAt: string;
  live: boolean;
}

const workers: CommandSpec = {
  name: 'workers',
  summary:
    'registered workers: holder, host, pid, queues with slots, workflows and the versions served, heartbeat',
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
          holder host pid queues { name slots } workflows { name version latest steps }
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
              'WORKFLOW VERSIONS',
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
              [...new Set(worker.workflows.map((workflow) => workflow.name))].join(',') || '-',
              worker.workflows.map(servedVersion).join(',') || '-',
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

/**
 * `name@version`, and ` (older)` when the engine serves it only for the workflows already
 * recorded under it (its new submits take the name's latest).
 */
function servedVersion(workflow: WorkerView['workflows'][number]): string {
  const served = `${workflow.name}@${workflow.version ?? '(before versions)'}`;
  return workflow.latest || workflow.version === null ? served : `${served} (older)`;
}

export const workerCommands: readonly CommandSpec[] = [workers];
