/**
 * R53 on `/metrics`: `causeway_queue_paused` is 1 for each paused queue (served or not) and 0
 * for a served queue or one with ready tasks that runs; a resume sets it back to 0.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import { startApi } from './helpers';
import { parsePrometheusText, samplesOf } from './prometheus-text';

const database = useTestDatabase();
const url = () => database().url;

const twoQueues = defineWorkflow({
  name: 'metrics-pause',
  input: z.object({}),
  steps: {
    a: step({ run: () => 'a' }),
    b: step({ queue: 'held', after: ['a'], run: () => 'b' }),
  },
});

async function pausedGauge(target: string): Promise<Record<string, number>> {
  const text = await (await fetch(target)).text();
  return Object.fromEntries(
    samplesOf(parsePrometheusText(text), 'causeway_queue_paused').map((sample) => [
      sample.labels.queue,
      sample.value,
    ]),
  );
}

describe('causeway_queue_paused', () => {
  it('says 1 for a paused queue and 0 for one that runs', async () => {
    const engine = testEngine(url(), { workflows: [twoQueues] });
    const api = await startApi(url(), { engineInstance: engine });
    const target = api.url.replace(/\/graphql$/, '/metrics');
    await engine.startWorker({ concurrency: { default: 2, held: 1 } });
    await engine.pauseQueue('held', { operator: 'ana', reason: 'outage' });
    await engine.pauseQueue('nowhere', { operator: 'ana', reason: 'before a deploy' });
    expect(await pausedGauge(target)).toEqual({ default: 0, held: 1, nowhere: 1 });
    await engine.resumeQueue('held', { operator: 'ana' });
    expect(await pausedGauge(target)).toEqual({ default: 0, held: 0, nowhere: 1 });
  });
});
