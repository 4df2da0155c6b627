import { describe, expect, it } from 'vitest';
import { serveApi } from '../../examples/publish-note/serve';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { slow } from './fixtures/workflows';
import { aliceToken, silentLogger, sseSubscribe, startApi } from './helpers';

const database = useTestDatabase();

describe('R6: after acceptance the work belongs to the service', () => {
  it('a client that disconnects right after submitWorkflow returns does not cancel the workflow', async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [publishNote] } });
    const client = new AbortController();
    const response = await fetch(api.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        authorization: `Bearer ${aliceToken}`,
      },
      body: JSON.stringify({
        query:
          'mutation { submitWorkflow(name: "publish-note", input: { noteId: "r6", version: 1 }) { workflow { id } } }',
      }),
      signal: client.signal,
    });
    expect(response.status).toBe(200);
    // The client goes away without even reading the answer.
    client.abort();

    const [row] = await query<{ id: string }>(
      url,
      `select id from causeway_workflows where idempotency_key = 'note:r6:publish:v1'`,
    );
    const workflowId = row?.id as string;
    expect(workflowId).toBeDefined();
    const worker = await api.engine.startWorker({ concurrency: 2 });
    await waitFor(async () => (await api.engine.getWorkflow(workflowId))?.state === 'succeeded', {
      timeoutMs: 15_000,
      description: 'the accepted workflow to run to the end',
    });
    await worker.stop();
    const cancels = await query(
      url,
      `select 1 from causeway_transitions where workflow_id = $1 and reason like 'cancel%'`,
      [workflowId],
    );
    expect(cancels).toEqual([]);
  });

  it("the service's shutdown stops the running work (released, not cancelled) and ends the API", async () => {
    const url = database().url;
    const service = new AbortController();
    const engine = testEngine(url, { workflows: [publishNote, slow], signal: service.signal });
    await engine.migrate();
    // serve.ts is what `pnpm start` runs: the same root signal closes the API and the engine.
    const api = await serveApi({
      engine,
      databaseUrl: url,
      logger: silentLogger(),
      signal: service.signal,
      port: 0,
      mode: 'production',
    });
    expect(api.demoToken).not.toBeNull();
    await engine.startWorker({ concurrency: 1 });
    const stream = sseSubscribe(api.url, 'subscription { transitions { id reason } }');
    expect(await stream.status).toBe(200);

    const submitted = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${api.demoToken}` },
      body: JSON.stringify({
        query:
          'mutation { submitWorkflow(name: "slow", input: { label: "shutdown" }) { workflow { id } } }',
      }),
    }).then(
      (response) =>
        response.json() as Promise<{ data: { submitWorkflow: { workflow: { id: string } } } }>,
    );
    const workflowId = submitted.data.submitWorkflow.workflow.id;
    await waitFor(
      async () => (await engine.getWorkflow(workflowId))?.tasks[0]?.state === 'leased',
      { description: 'the slow step running' },
    );

    service.abort();
    // Open subscriptions complete (the stream ends instead of hanging), the API stops listening…
    await stream.done;
    await api.close();
    await expect(fetch(api.url, { method: 'GET' })).rejects.toThrow();
    // …and the step was stopped: its lease released before any side effect, not cancelled.
    await waitFor(
      async () => {
        const rows = await query<{ reason: string; to_state: string }>(
          url,
          `select reason, to_state from causeway_transitions
            where workflow_id = $1 and task_id is not null order by id desc limit 1`,
          [workflowId],
        );
        return rows[0]?.reason === 'worker_shutdown' && rows[0]?.to_state === 'queued';
      },
      { description: 'the worker_shutdown release' },
    );
    const [workflow] = await query<{ state: string }>(
      url,
      'select state from causeway_workflows where id = $1',
      [workflowId],
    );
    expect(workflow?.state).toBe('queued');
    await expect(engine.submit('slow', { label: 'after' })).rejects.toMatchObject({
      code: 'closed',
    });
    expect(await logMismatches(url)).toEqual([]);
  });
});
