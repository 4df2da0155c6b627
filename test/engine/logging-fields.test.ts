import { defineWorkflow, StepError, step } from '@causeway/workflow';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound } from './semantics-support';

/**
 * R33: logs are pino JSON and every line carries workflow id, task id, attempt and holder;
 * lines that are not about a task carry the keys with null.
 */
const database = useTestDatabase();
const url = () => database().url;

/** Logs through ctx.logger, fails once transiently, then succeeds. */
const chatty = defineWorkflow({
  name: 'log-chatty',
  input: z.object({ label: z.string() }),
  steps: {
    only: step<{ label: string }>({
      queue: 'q-log',
      maxAttempts: 2,
      backoff: { initialIntervalMs: 0, maximumIntervalMs: 0 },
      run: (ctx) => {
        ctx.logger.info({ label: ctx.input.label }, 'hello from the step');
        if (ctx.attempt === 1) throw new StepError('network', 'first attempt drops');
        return 'ok';
      },
    }),
  },
});

interface Line {
  readonly level: number;
  readonly msg?: string;
  readonly workflowId?: string | null;
  readonly taskId?: string | null;
  readonly attempt?: number | null;
  readonly holder?: string | null;
}

describe('log lines carry workflow id, task id, attempt and holder (R33)', () => {
  it('every JSON line of a publish-note run has the four keys', async () => {
    const lines: string[] = [];
    const stream = {
      write(chunk: string) {
        lines.push(...chunk.split('\n').filter((line) => line.trim() !== ''));
      },
    };
    const logger = pino({ level: 'debug' }, stream);
    const cw = testEngine(url(), { workflows: [publishNote, chatty], logger });
    await cw.migrate();
    const note = await cw.submit('publish-note', { noteId: 'logged', version: 1 });
    const noisy = await cw.submit('log-chatty', { label: 'noisy' });
    const worker = await cw.startWorker({ concurrency: 2 });
    await waitFor(async () => {
      const views = await Promise.all([note, noisy].map((s) => cw.getWorkflow(s.workflow.id)));
      return views.every((view) => view?.state === 'succeeded');
    });
    await worker.stop();
    const noteView = await cw.getWorkflow(note.workflow.id);
    const noisyView = await cw.getWorkflow(noisy.workflow.id);
    await cw.close();

    const parsed = lines.map((line) => JSON.parse(line) as Line);
    expect(parsed.length).toBeGreaterThan(5);
    for (const line of parsed) {
      for (const key of ['workflowId', 'taskId', 'attempt', 'holder'] as const) {
        expect(line, `${key} in ${JSON.stringify(line)}`).toHaveProperty(key);
      }
      expect(line.holder).toBe(cw.holder);
      if (line.workflowId === null) {
        // An engine-level line: not about any task.
        expect(line).toMatchObject({ taskId: null, attempt: null });
      } else {
        expect(typeof line.workflowId).toBe('string');
        expect(typeof line.taskId).toBe('string');
        expect(Number.isInteger(line.attempt)).toBe(true);
      }
    }
    // Engine-level lines exist (worker started/stopped) and keep the keys.
    expect(parsed.some((line) => line.workflowId === null && line.msg === 'worker started')).toBe(
      true,
    );

    // Every task of both workflows is logged under its own ids, with its attempt.
    for (const view of [noteView, noisyView]) {
      for (const task of view?.tasks ?? []) {
        const own = parsed.filter((line) => line.taskId === task.id);
        expect(own.length, `lines for ${task.step}`).toBeGreaterThan(0);
        for (const line of own) {
          expect(line.workflowId).toBe(view?.id);
          expect(line.attempt).toBeGreaterThanOrEqual(1);
          expect(line.attempt).toBeLessThanOrEqual(task.attempt);
        }
      }
    }
    // The step's own ctx.logger lines carry the fields too, with the attempt they belong to.
    const stepLines = parsed.filter((line) => line.msg === 'hello from the step');
    expect(stepLines.map((line) => [line.taskId, line.attempt])).toEqual([
      [noisyView?.tasks[0]?.id, 1],
      [noisyView?.tasks[0]?.id, 2],
    ]);
  });
});

describe('the log of this file', () => {
  it('holds only allowed edges, in unbroken chains, matching every current state (R25)', async () => {
    await expectLogIsSound(url());
  });
});
