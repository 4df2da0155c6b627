import { describe, expect, it } from 'vitest';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { waitFor } from '../helpers/wait-for';
import { spawnFixture } from './fixtures/processes';
import {
  aliceToken,
  bobToken,
  data,
  operators,
  sseSubscribe,
  startApi,
  wsClient,
  wsSubscribe,
} from './helpers';

const database = useTestDatabase();

const subscription = `subscription { transitions { id workflowId step to reason actor } }`;
type Event = {
  transitions: {
    id: string;
    workflowId: string;
    step: string | null;
    to: string;
    reason: string;
    actor: string;
  };
};

const submitAndCancel = async (url: string, token: string, noteId: string) => {
  const submitted = await data<{ submitWorkflow: { workflow: { id: string } } }>(
    url,
    `mutation { submitWorkflow(name: "publish-note", input: { noteId: "${noteId}", version: 1 }) { workflow { id } } }`,
    { token },
  );
  const id = submitted.submitWorkflow.workflow.id;
  await data(url, `mutation { cancelWorkflow(id: "${id}") { state } }`, { token });
  return id;
};

describe('two API processes on one database', () => {
  it('a subscription on one process sees the transitions caused through the other, both ways', async () => {
    const url = database().url;
    const local = await startApi(url, { engine: { workflows: [publishNote] } });
    const remote = spawnFixture('api-process.ts', {
      CAUSEWAY_CHILD_DATABASE_URL: url,
      CAUSEWAY_OPERATORS: JSON.stringify(operators),
    });
    const { url: remoteUrl, pid } = await remote.ready();
    expect(remoteUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/graphql$/);
    expect(pid).not.toBe(process.pid);

    const onLocal = wsSubscribe<Event>(wsClient(local.wsUrl), subscription);
    const onRemote = sseSubscribe<Event>(remoteUrl as string, subscription);
    expect(await onRemote.status).toBe(200);
    // Both streams are live once a probe workflow shows up on both.
    const probe = await submitAndCancel(local.url, aliceToken, 'probe');
    await waitFor(
      () =>
        [onLocal, onRemote].every((stream) =>
          stream.items.some((item) => item.transitions.workflowId === probe),
        ),
      { timeoutMs: 30_000, description: 'the probe on both streams' },
    );

    const viaRemote = await submitAndCancel(remoteUrl as string, bobToken, 'via-remote');
    const viaLocal = await submitAndCancel(local.url, aliceToken, 'via-local');
    const rowsFor = (stream: typeof onLocal, id: string) =>
      stream.items.map((item) => item.transitions).filter((row) => row.workflowId === id);
    await waitFor(
      () =>
        rowsFor(onLocal, viaRemote).some((row) => row.step === null && row.to === 'CANCELLED') &&
        rowsFor(onRemote, viaLocal).some((row) => row.step === null && row.to === 'CANCELLED'),
      { timeoutMs: 30_000, description: 'each cancel on the other process' },
    );
    expect(
      rowsFor(onLocal, viaRemote)
        .filter((row) => row.reason === 'CANCELLED_BEFORE_START')
        .map((row) => row.actor),
    ).toEqual(['operator:bob', 'operator:bob', 'operator:bob', 'operator:bob']);
    expect(
      rowsFor(onRemote, viaLocal)
        .filter((row) => row.reason === 'CANCELLED_BEFORE_START')
        .map((row) => row.actor),
    ).toEqual(['operator:alice', 'operator:alice', 'operator:alice', 'operator:alice']);
    onLocal.stop();
    onRemote.stop();
    // Over the span both streams covered, both processes delivered the same rows in one order.
    const ids = (stream: typeof onLocal) => stream.items.map((item) => BigInt(item.transitions.id));
    const [localIds, remoteIds] = [ids(onLocal), ids(onRemote)];
    const from = [localIds[0] ?? 0n, remoteIds[0] ?? 0n].reduce((a, b) => (a > b ? a : b));
    const to = [localIds.at(-1) ?? 0n, remoteIds.at(-1) ?? 0n].reduce((a, b) => (a < b ? a : b));
    const span = (list: bigint[]) => list.filter((id) => id >= from && id <= to);
    expect(span(localIds).length).toBeGreaterThanOrEqual(16);
    expect(span(localIds)).toEqual(span(remoteIds));
    await remote.stop();
  }, 60_000);
});
