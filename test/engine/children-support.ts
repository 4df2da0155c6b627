import type { Engine } from '@causeway/engine';
import { waitFor } from '../helpers/wait-for';

export type { Engine } from '@causeway/engine';
export { map, startChild, startChildren, workflow } from '@causeway/workflow';

/** The workflow once it is terminal (succeeded, dead or cancelled), within 15 s. */
export async function finished(app: Engine, id: string) {
  return waitFor(
    async () => {
      const found = await app.getWorkflow(id);
      return found != null && ['succeeded', 'dead', 'cancelled'].includes(found.state)
        ? found
        : undefined;
    },
    { timeoutMs: 15_000 },
  );
}
