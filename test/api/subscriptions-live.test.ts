import { describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { logMismatches } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { spawnFixture } from './fixtures/processes';
import { aliceToken, data, sseSubscribe, startApi, wsClient, wsSubscribe } from './helpers';

const database = useTestDatabase();

const transitionFields =
  'id workflowId taskId step from to reason errorCategory errorSummary actor attempt at detail';
const subscription = `subscription($workflowId: ID, $after: ID) {
  transitions(workflowId: $workflowId, after: $after) { ${transitionFields} }
}`;
type Row = {
  id: string;
  workflowId: string;
  reason: string;
  actor: string;
  to: string;
  step: string | null;
};
type Event = { transitions: Row };

async function submit(url: string, noteId: string): Promise<string> {
  const result = await data<{ submitWorkflow: { workflow: { id: string } } }>(
    url,
    `mutation($input: JSON!) {
      submitWorkflow(name: "publish-note", input: $input) { workflow { id } }
    }`,
    { token: aliceToken, variables: { input: { noteId, version: 1, title: noteId } } },
  );
  return result.submitWorkflow.workflow.id;
}

async function logOf(url: string, id: string): Promise<Row[]> {
  const result = await data<{ workflow: { transitions: Row[] } }>(
    url,
    `query($id: ID!) { workflow(id: $id) { transitions { ${transitionFields} } } }`,
    { variables: { id } },
  );
  return result.workflow.transitions;
}

const settled = (rows: readonly Row[]) =>
  rows.some((row) => row.step === null && row.to === 'SUCCEEDED');

describe('transitions subscription, fed by LISTEN/NOTIFY from a worker in another process', () => {
  it('streams a publish-note run live and in order over SSE and WebSocket, equal to the transitions query', async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [publishNote] } });
    const workflowId = await submit(api.url, 'live-1');

    // Subscribe before any worker exists: `after: "0"` first replays the submitted rows.
    const sse = sseSubscribe<Event>(api.url, subscription, {
      variables: { workflowId, after: '0' },
    });
    const ws = wsSubscribe<Event>(wsClient(api.wsUrl), subscription, { workflowId, after: '0' });
    await waitFor(() => sse.items.length >= 4 && ws.items.length >= 4, {
      description: 'the submitted rows from the log',
    });
    expect(sse.items.map((item) => item.transitions.reason)).toEqual([
      'SUBMITTED',
      'SUBMITTED',
      'SUBMITTED',
      'SUBMITTED',
    ]);

    const worker = spawnFixture('publish-worker.ts', { CAUSEWAY_CHILD_DATABASE_URL: url });
    const { holder, pid } = await worker.ready();
    expect(holder).toContain(`/${pid}/`);

    const rowsOf = (items: Event[]) => items.map((item) => item.transitions);
    await waitFor(() => settled(rowsOf(sse.items)) && settled(rowsOf(ws.items)), {
      timeoutMs: 30_000,
      description: 'the workflow-level succeeded row on both streams',
    }).catch(async (error) => {
      const log = await logOf(api.url, workflowId);
      throw new Error(
        `${error}\nsse: ${rowsOf(sse.items).map((row) => row.id)}\nws: ${rowsOf(ws.items).map((row) => row.id)}\n` +
          `log: ${log.map((row) => `${row.id}:${row.step}:${row.reason}`)}\nfeed position ${api.server.feed.position}\n${worker.output()}`,
      );
    });
    sse.stop();
    ws.stop();
    await sse.done;
    expect(sse.errors).toEqual([]);
    expect(ws.errors).toEqual([]);

    const log = await logOf(api.url, workflowId);
    // Everything the worker (another process) wrote arrived live, in log order, exactly once.
    expect(rowsOf(sse.items)).toEqual(log);
    expect(rowsOf(ws.items)).toEqual(log);
    const ids = log.map((row) => BigInt(row.id));
    expect([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(ids);
    expect(log.filter((row) => row.actor === `worker:${holder}`).length).toBeGreaterThanOrEqual(6);
    expect(log.map((row) => `${row.step ?? 'workflow'}:${row.reason}`)).toEqual(
      expect.arrayContaining([
        'render:LEASE_ACQUIRED',
        'render:COMPLETED',
        'review:UPSTREAM_SUCCEEDED',
        'publish:COMPLETED',
        'workflow:COMPLETED',
      ]),
    );
    await worker.stop();
    expect(await logMismatches(url)).toEqual([]);
  }, 60_000);

  it('a subscriber that reconnects with the last id it saw gets exactly what it missed, then live rows', async () => {
    const url = database().url;
    const api = await startApi(url, { engine: { workflows: [publishNote] } });
    const workflowId = await submit(api.url, 'resume-1');

    // All workflows, from the moment of subscribing plus this workflow's history.
    const first = wsSubscribe<Event>(wsClient(api.wsUrl), subscription, { after: '0' });
    const worker = spawnFixture('publish-worker.ts', { CAUSEWAY_CHILD_DATABASE_URL: url });
    await worker.ready();
    // Disconnect mid-run: as soon as the worker's first edge arrived.
    await waitFor(() => first.items.some((item) => item.transitions.reason === 'LEASE_ACQUIRED'), {
      description: 'the first lease',
    });
    first.stop();
    const seen = first.items.map((item) => item.transitions);
    const lastId = seen.at(-1)?.id as string;

    await waitFor(async () => settled(await logOf(api.url, workflowId)), {
      timeoutMs: 30_000,
      description: 'the workflow to finish while nobody listens',
    });

    const resumed = sseSubscribe<Event>(api.url, subscription, { variables: { after: lastId } });
    // A sentinel: once a row of a later workflow arrives, every earlier row was delivered.
    const sentinel = await submit(api.url, 'resume-sentinel');
    await waitFor(() => resumed.items.some((item) => item.transitions.workflowId === sentinel), {
      description: 'the sentinel workflow on the resumed stream',
    });
    resumed.stop();
    const missed = resumed.items
      .map((item) => item.transitions)
      .filter((row) => row.workflowId === workflowId);
    const log = await logOf(api.url, workflowId);
    expect(missed.length).toBeGreaterThan(0);
    // (The stream had every workflow's rows: this file's other tests share the database.)
    expect([...seen.filter((row) => row.workflowId === workflowId), ...missed]).toEqual(log);
    expect(new Set(missed.map((row) => row.id)).size).toBe(missed.length);
    expect(missed.every((row) => BigInt(row.id) > BigInt(lastId))).toBe(true);
    await worker.stop();
  }, 60_000);
});
