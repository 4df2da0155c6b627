import { httpChannel } from '@causeway/engine';
import { defineWorkflow, send, step } from '@causeway/workflow';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Platform, startPlatform } from '../../examples/platform/server';
import { useTestDatabase } from '../helpers/database';
import { waitFor } from '../helpers/wait-for';
import { data, startApi } from './helpers';

const database = useTestDatabase();
let platform: Platform | undefined;
afterEach(async () => {
  await platform?.close();
  platform = undefined;
});

const post = defineWorkflow({
  name: 'api-outbox',
  input: z.object({}),
  steps: {
    publish: step({
      run: () => send('platform', { noteId: 'n', version: 1, title: 't', html: 'h' }),
    }),
  },
});

const query = `query ($id: ID!) {
  workflow(id: $id) { state tasks { state sending outbox { id channel state attempts } } }
}`;
type Answer = {
  workflow: {
    state: string;
    tasks: {
      state: string;
      sending: boolean;
      outbox: { id: string; channel: string; state: string; attempts: number }[];
    }[];
  };
};

describe('a task sending through the outbox (R22)', () => {
  it('shows "submitted, sending" while the message is pending, then delivered', async () => {
    platform = await startPlatform({});
    const api = await startApi(database().url, {
      engine: {
        workflows: [post],
        channels: [
          httpChannel({ name: 'platform', url: `${platform.url}/posts`, confirm: 'response' }),
        ],
      },
    });
    const { workflow } = await api.engine.submit('api-outbox', {});
    const noDispatcher = await api.engine.startWorker({ concurrency: 1, outbox: false });
    const sending = await waitFor(async () => {
      const answer = await data<Answer>(api.url, query, { variables: { id: workflow.id } });
      return answer.workflow.tasks[0]?.state === 'AWAITING_RECEIPT' ? answer : undefined;
    });
    expect(sending.workflow.tasks[0]).toMatchObject({
      sending: true,
      outbox: [{ channel: 'platform', state: 'pending', attempts: 0 }],
    });
    await noDispatcher.stop();
    const dispatcher = await api.engine.startWorker({ concurrency: 1 });
    const delivered = await waitFor(async () => {
      const answer = await data<Answer>(api.url, query, { variables: { id: workflow.id } });
      return answer.workflow.state === 'SUCCEEDED' ? answer : undefined;
    });
    await dispatcher.stop();
    expect(delivered.workflow.tasks[0]).toMatchObject({
      state: 'SUCCEEDED',
      sending: false,
      outbox: [{ id: sending.workflow.tasks[0]?.outbox[0]?.id, state: 'delivered', attempts: 1 }],
    });
    expect(platform.stats().postsPublished).toBe(1);
  });
});
