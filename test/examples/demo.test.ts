import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { expectLogIsSound } from '../engine/semantics-support';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';

/**
 * The main command (`pnpm start`) runs its demo to the end on this file's own database and
 * exits 0; what it printed agrees with what it settled in the database.
 */
const database = useTestDatabase();
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const mainScript = join(repoRoot, 'examples/publish-note/main.ts');
const budgetMs = 75_000;

let child: ChildProcess | null = null;
let dataDir: string | null = null;
afterEach(async () => {
  if (child !== null && child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
  child = null;
  if (dataDir !== null) rmSync(dataDir, { recursive: true, force: true });
  dataDir = null;
});

/** Runs main.ts as `pnpm start` does (through tsx) and collects its output until it exits. */
async function runDemo(env: Record<string, string>) {
  const started = spawn(process.execPath, ['--import', 'tsx', mainScript], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = started;
  let stdout = '';
  let stderr = '';
  /** When it printed its last line, the engine log's path: shutdown starts right after it. */
  let doneAt = Number.NaN;
  started.stdout?.on('data', (data: Buffer) => {
    stdout += data.toString();
    if (Number.isNaN(doneAt) && stdout.includes('engine log (pino JSON):'))
      doneAt = performance.now();
  });
  started.stderr?.on('data', (data: Buffer) => {
    stderr += data.toString();
  });
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve) => {
      const timer = setTimeout(() => started.kill('SIGKILL'), budgetMs);
      started.once('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal });
      });
    },
  );
  return { ...exit, stdout, stderr, shutdownMs: performance.now() - doneAt };
}

/** Every match of `pattern` (with the g flag) in `text`, as its groups. */
function lines(text: string, pattern: RegExp): string[][] {
  return [...text.matchAll(pattern)].map((match) => match.slice(1));
}

describe('pnpm start (examples/publish-note/main.ts) with CAUSEWAY_DEMO_EXIT=1', () => {
  it(
    'runs the demo to its end on DATABASE_URL and exits 0, having settled what it printed',
    async () => {
      const url = database().url;
      dataDir = mkdtempSync(join(tmpdir(), 'causeway-demo-'));
      const run = await runDemo({
        DATABASE_URL: url,
        CAUSEWAY_DEMO_EXIT: '1',
        CAUSEWAY_API_PORT: '0',
        CAUSEWAY_DATA_DIR: dataDir,
      });
      const output = `--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`;
      expect({ code: run.code, signal: run.signal }, output).toEqual({ code: 0, signal: null });
      // Settled and drained at once, it exits at once: no drain budget's timer keeps it alive.
      expect(run.shutdownMs).toBeLessThan(3_000);
      expect(run.stdout).toContain('database ready (DATABASE_URL)');
      expect(run.stdout).toMatch(/GraphQL API: http:\/\/127\.0\.0\.1:\d+\//);

      // What it submitted: six submissions, the third a double click of the first, the last
      // delayed (R36).
      const submitted = lines(
        run.stdout,
        /^submitted (\S+) v(\d+)(?: to start in \d+ ms)?: workflow (\S+) \((\w+)\)( — deduplicated, same workflow)?$/gm,
      );
      expect(submitted).toHaveLength(6);
      expect(submitted.map(([, , , , dedup]) => dedup !== undefined)).toEqual([
        false,
        false,
        true,
        false,
        false,
        false,
      ]);
      expect(submitted[2]?.[2]).toBe(submitted[0]?.[2]);
      const ids = [...new Set(submitted.map(([, , id]) => id as string))];
      expect(ids).toHaveLength(5);
      const [withdrawn] = lines(run.stdout, /^cancelled (\S+) as operator "demo": now (\w+)$/gm);
      expect(withdrawn?.[0]).toBe(ids[2]);
      expect(run.stdout).toMatch(
        /^schedule digest-every-minute: "\* \* \* \* \*" in Europe\/Berlin, next tick \d{4}-/m,
      );

      // The summary it printed is what the database holds: the only notes there, and the
      // digest its trigger submitted (a minute's tick may have submitted another meanwhile).
      const summary = lines(run.stdout, /^ {2}wf(\d) (\S+): (\w+) — /gm);
      const workflows = await query<{ id: string; state: string; idempotency_key: string }>(
        url,
        `select id, state, idempotency_key from causeway_workflows where name = 'publish-note'`,
      );
      const [triggered] = lines(
        run.stdout,
        /^triggered digest-every-minute as operator "demo": workflow (\S+)$/gm,
      );
      const digests = await query<{ id: string; state: string }>(
        url,
        `select id, state from causeway_workflows where name = 'note-digest'`,
      );
      expect(digests.map((row) => row.id)).toContain(triggered?.[0]);
      expect(
        new Map(
          [...workflows, ...digests.filter((row) => row.id === triggered?.[0])].map((row) => [
            row.id,
            row.state,
          ]),
        ),
      ).toEqual(new Map(summary.map(([, id, state]) => [id, state])));
      // The first note's syndication: one child per platform (R44), the retired one dead and
      // tolerated (R45), and the note waited for them with a `why` that said so (R48).
      const children = await query<{ name: string; state: string; parent_workflow_id: string }>(
        url,
        `select name, state, parent_workflow_id from causeway_workflows
          where parent_workflow_id is not null order by child_index`,
      );
      expect(children.map((row) => [row.name, row.state, row.parent_workflow_id])).toEqual([
        ['publish-to-platform', 'succeeded', ids[0]],
        ['publish-to-platform', 'succeeded', ids[0]],
        ['publish-to-platform', 'dead', ids[0]],
      ]);
      expect(run.stdout).toMatch(
        /^why wf1: children_pending — syndicate: awaiting 3 child workflows: /m,
      );
      expect(run.stdout).toMatch(
        /^ {2}syndicate\[2\] publish-to-platform myspace \S+: dead — not_found: myspace retired its posting API$/m,
      );
      const [syndicated] = await query<{ output: { state: string; reason?: string }[] }>(
        url,
        `select output from causeway_tasks where workflow_id = $1 and step = 'syndicate'`,
        [ids[0]],
      );
      expect(syndicated?.output.map((outcome) => [outcome.state, outcome.reason])).toEqual([
        ['succeeded', undefined],
        ['succeeded', undefined],
        ['dead', 'non_retryable_error'],
      ]);
      expect((await query(url, 'select id from causeway_workflows')).length).toBe(
        5 + digests.length + children.length,
      );
      const stateOf = new Map(workflows.map((row) => [row.id, row.state]));
      expect(ids.map((id) => stateOf.get(id))).toEqual([
        'succeeded',
        'succeeded',
        'cancelled',
        'succeeded',
        'succeeded',
      ]);
      // Approvals came through GraphQL sendEvent (operator demo); b's before its step waited.
      expect(run.stdout).toMatch(
        /^sendEvent note\.approved \(key \S+-b\) by grace: no step waits yet, kept for it$/m,
      );
      const approvals = await query<{ workflow_id: string; reason: string; actor: string }>(
        url,
        `select workflow_id, reason, actor from causeway_transitions
          where step = 'approval' and reason in ('event_received', 'event_timeout') order by id`,
      );
      const approvalOf = new Map(approvals.map((row) => [row.workflow_id, row]));
      for (const id of [ids[0], ids[1], ids[4]]) {
        expect(approvalOf.get(id as string)).toMatchObject({
          reason: 'event_received',
          actor: 'operator:demo',
        });
      }
      // Nobody approved d: its wait ended as declared (onTimeout), and nothing was published.
      expect(approvalOf.get(ids[3] as string)?.reason).toBe('event_timeout');
      const [skipped] = await query<{ output: unknown }>(
        url,
        `select output from causeway_tasks where workflow_id = $1 and step = 'publish'`,
        [ids[3]],
      );
      expect(skipped?.output).toEqual({ published: false, editor: 'nobody', verdict: 'rejected' });
      // e started only after its delay.
      const [delayed] = await query<{ detail: unknown; waited: number }>(
        url,
        `select s.detail, extract(epoch from (c.at - s.at)) * 1000 as waited
           from causeway_transitions s join causeway_transitions c on c.task_id = s.task_id
          where s.workflow_id = $1 and s.step = 'render' and s.reason = 'submitted'
            and c.reason = 'lease_acquired'`,
        [ids[4]],
      );
      expect(delayed?.detail).toEqual({ delayMs: 3_000 });
      expect(Number(delayed?.waited)).toBeGreaterThanOrEqual(3_000);
      const keys = workflows.map((row) => row.idempotency_key).sort();
      expect(keys).toEqual(
        submitted
          .filter(([, , , , dedup]) => dedup === undefined)
          .map(([noteId, version]) => `note:${noteId}:publish:v${version}`)
          .sort(),
      );

      // Each task ended as its workflow did; R25 and the edge table hold for the whole log.
      const tasks = await query<{ workflow_id: string; step: string; state: string }>(
        url,
        `select t.workflow_id, t.step, t.state from causeway_tasks as t
           join causeway_workflows as w on w.id = t.workflow_id
          where w.name = 'publish-note' order by t.workflow_id, t.created_at`,
      );
      expect(tasks).toHaveLength(25);
      for (const task of tasks) expect(task.state).toBe(stateOf.get(task.workflow_id));
      await expectLogIsSound(url);

      // The platform's effects it printed, against what the database recorded of them.
      const [effects] = lines(
        run.stdout,
        /^platform effects: (\d+) assets uploaded, (\d+) reviews, (\d+) posts published$/gm,
      );
      const [recorded] = await query<{ assets: number; reviews: number; posts: number }>(
        url,
        `select
           (select count(*)::int from causeway_tasks t, jsonb_object_keys(t.checkpoints) k
             where t.step = 'render' and k like 'asset:%') as assets,
           (select count(*)::int from causeway_transitions
             where step = 'review' and reason = 'submitted_awaiting_receipt') as reviews,
           (select count(*)::int from causeway_outbox where state = 'delivered')
             + (select count(*)::int from causeway_workflows
                 where name = 'publish-to-platform' and state = 'succeeded') as posts`,
      );
      expect(effects?.map(Number)).toEqual([recorded?.assets, recorded?.reviews, recorded?.posts]);
      // Three notes through the outbox, and the first on the two platforms that took it.
      expect(recorded?.posts).toBe(3 + 2);

      // The engine's log is pino JSON; task lines carry workflow, task, attempt and holder.
      const logLines = readFileSync(join(dataDir, 'causeway.log'), 'utf8').trim().split('\n');
      const entries = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
      const taskLines = entries.filter((entry) => entry.taskId !== undefined);
      expect(taskLines.length).toBeGreaterThan(0);
      for (const entry of taskLines) {
        expect(Object.keys(entry)).toEqual(
          expect.arrayContaining(['workflowId', 'taskId', 'attempt', 'holder']),
        );
      }
    },
    budgetMs + 15_000,
  );
});
