import type { CommandSpec } from '../command';
import { graphqlRequest } from '../graphql-client';
import { table } from '../table';

/** `versions`: every version of every workflow and where it stands (GraphQL `Query.definitions`, R54). */

export interface VersionView {
  name: string;
  version: string | null;
  defined: boolean;
  latest: boolean;
  status: 'SERVING' | 'DRAINING' | 'DRAINED';
  inFlight: number;
  workers: string[];
}

const versions: CommandSpec = {
  name: 'versions',
  summary:
    'workflow versions: in-flight count, live workers, SERVING / DRAINING / DRAINED (safe to delete)',
  args: [],
  options: {
    name: { type: 'string', value: 'name', description: 'only the versions of this workflow' },
  },
  async run(invocation) {
    const data = await graphqlRequest<{ definitions: VersionView[] }>(
      invocation.endpoint,
      `query CausewayVersions {
        definitions { name version defined latest status inFlight workers }
      }`,
      {},
    );
    const only = invocation.option('name');
    const shown = {
      definitions: data.definitions.filter(
        (definition) => only === undefined || definition.name === only,
      ),
    };
    invocation.output.result(shown, () =>
      shown.definitions.length === 0
        ? 'no workflow version is defined, served or in flight'
        : table(
            ['WORKFLOW', 'VERSION', 'STATUS', 'IN FLIGHT', 'WORKERS', 'HERE'],
            shown.definitions.map((definition) => [
              definition.name,
              definition.version ?? '(before versions)',
              definition.status,
              String(definition.inFlight),
              definition.workers.join(',') || '-',
              definition.latest ? 'latest' : definition.defined ? 'defined' : '-',
            ]),
          ),
    );
    return undefined;
  },
};

export const versionCommands: readonly CommandSpec[] = [versions];
