/**
 * R44 with R50: a map step's `concurrency` runs at most that many of its children's tasks at
 * once, as one concurrency key (group `map:<workflow>/<step>`, the map step's task as key),
 * counted by the log's own lease intervals; another map step's children are not held by it.
 */
import { defineWorkflow, map, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { maxSlotOverlap, waitAllSucceeded } from './concurrency-key-log';

const database = useTestDatabase();
const url = () => database().url;

const resize = defineWorkflow({
  name: 'resize-image',
  input: z.object({ image: z.number().int() }),
  steps: {
    only: step({
      run: async () => {
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
        return null;
      },
    }),
  },
});
const upload = defineWorkflow({
  name: 'resize-upload',
  input: z.object({ images: z.number().int() }),
  steps: {
    resize: map({
      over: ({ input }) =>
        Array.from({ length: (input as { images: number }).images }, (_, n) => n),
      input: (image: number) => ({ image }),
      workflow: resize,
      concurrency: 2,
    }),
  },
});

describe('a map step with concurrency (R44, R50)', () => {
  it('never runs more of its children’s tasks at once than it allows, per map task', async () => {
    const engines = [0, 1].map(() =>
      testEngine(url(), { workflows: [upload, resize], pollIntervalMs: 20 }),
    );
    await (engines[0] as (typeof engines)[number]).migrate();
    for (const cw of engines) await cw.startWorker({ concurrency: 8 });
    const ids = [
      (await (engines[0] as (typeof engines)[number]).submit('resize-upload', { images: 12 }))
        .workflow.id,
      (await (engines[1] as (typeof engines)[number]).submit('resize-upload', { images: 12 }))
        .workflow.id,
    ];
    await waitAllSucceeded(url(), ids, 60_000, 'both uploads succeeded');
    const mapTasks = await query<{ id: string }>(
      url(),
      'select id from causeway_tasks where workflow_id = any($1::uuid[])',
      [ids],
    );
    const overlap = await maxSlotOverlap(url(), 'map:resize-upload/resize');
    // One key per map task: the two uploads' children never share a limit.
    expect([...overlap.keys()].sort()).toEqual(mapTasks.map((task) => task.id).sort());
    for (const most of overlap.values()) expect(most).toBe(2);
    const [children] = await query<{ n: number }>(
      url(),
      `select count(*)::int as n from causeway_tasks
       where concurrency_group = 'map:resize-upload/resize' and state = 'succeeded'`,
    );
    expect(children?.n).toBe(24);
    expect(await logMismatches(url())).toEqual([]);
  }, 90_000);
});
