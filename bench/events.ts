/**
 * `pnpm bench:events [--waiting 10000] [--rounds 3]`: what an event costs (R38), beside a
 * submit in the same run. Each round, in fresh databases: `--waiting` workflows wait for an
 * event each; then (a) one-step workflows submitted one by one from 10 producers, (b) their
 * events sent one by one from 10 senders, (c) another set's events sent batched, 1,000 per
 * `sendEvents` call, (d) the events of a set of two-step workflows (a step after the event
 * step, which each event makes ready) sent one by one from 10 senders. Every send must
 * complete its wait; the rates, (b) ÷ (a) and (d) ÷ (a) are printed per round with their
 * medians. With `--floor`, (e) a fourth set's events sent one by one from 10
 * senders through the contract's floor (`event-floor.ts`), in the same run. Each phase also
 * reports the CPU per operation of this process and, when the server runs on this machine, of
 * the whole PostgreSQL server (every backend and background process).
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createEngine, type Engine } from '@causeway/engine';
import { defineWorkflow, step, workflow } from '@causeway/workflow';
import pg from 'pg';
import { pino } from 'pino';
import { z } from 'zod';
import { now, parallelFor } from './clock';
import { floorSend, installEventFloor } from './event-floor';
import { postmasterPid, serverCpuUs } from './process-cpu';
import { checkpoint, startServer } from './server';

const { values } = parseArgs({
  options: {
    waiting: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    senders: { type: 'string', default: '10' },
    batch: { type: 'string', default: '1000' },
    floor: { type: 'boolean', default: false },
  },
});
const waiting = Number(values.waiting);
const rounds = Number(values.rounds);
const senders = Number(values.senders);
const batch = Number(values.batch);

const approval = {
  name: 'bench.approved',
  key: (ctx: { readonly input: { readonly id: string } }) => ctx.input.id,
  timeoutMs: 86_400_000,
};
const awaited = workflow({ name: 'bench-awaited', input: z.object({ id: z.string() }) })
  .event('approval', approval)
  .build();
// Its own event name: the engine's send leaves out the promotion part only for events no
// step runs after.
const chained = workflow({ name: 'bench-chained', input: z.object({ id: z.string() }) })
  .event('approval', { ...approval, name: 'bench.chained' })
  .step('publish', { after: ['approval'], queue: 'bench-publish', run: () => null })
  .build();
const job = defineWorkflow({
  name: 'bench-job',
  input: z.object({ i: z.number() }),
  steps: { work: step({ run: () => null }) },
});

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const server = await startServer(repoRoot);

async function engineOn(url: string): Promise<Engine> {
  const engine = createEngine({
    databaseUrl: url,
    workflows: [awaited, chained, job],
    logger: pino({ level: 'silent' }),
    poolSize: senders + 2,
  });
  await engine.migrate();
  return engine;
}

/** Submits `count` waiting workflows (untimed) and answers their keys. */
async function parkWaits(
  engine: Engine,
  prefix: string,
  count: number,
  name = 'bench-awaited',
): Promise<string[]> {
  const keys = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (let first = 0; first < count; first += 1_000) {
    await engine.submitMany(
      keys.slice(first, first + 1_000).map((id) => ({ name, input: { id } })),
    );
  }
  return keys;
}

/** Sends the events of `keys` one by one from the senders; each must complete one wait. */
function sendOneByOne(engine: Engine, name: string, keys: readonly string[]): Promise<void> {
  return parallelFor(keys.length, senders, async (i) => {
    const answer = await engine.sendEvent(name, keys[i] as string, { i });
    if (answer.tasks.length !== 1)
      throw new Error(`event ${i} completed ${answer.tasks.length} tasks`);
  });
}

async function completed(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select count(*)::int as n from causeway_tasks where step = 'approval' and state = 'succeeded'`,
    );
    const ready = await client.query(
      `select count(*)::int as n from causeway_tasks where step = 'publish' and state = 'queued'`,
    );
    return rows[0].n + ready.rows[0].n;
  } finally {
    await client.end();
  }
}

interface Phase {
  readonly rate: number;
  /** CPU µs per operation: this process, and the server (NaN when it is elsewhere). */
  readonly nodeUs: number;
  readonly serverUs: number;
}

/** Runs `count` operations through `run` and measures their rate and CPU per operation. */
async function phase(
  postmaster: number | null,
  count: number,
  run: () => Promise<void>,
): Promise<Phase> {
  const nodeBefore = process.cpuUsage();
  const serverBefore = serverCpuUs(postmaster);
  const started = now();
  await run();
  const seconds = (now() - started) / 1000;
  const node = process.cpuUsage(nodeBefore);
  return {
    rate: count / seconds,
    nodeUs: (node.user + node.system) / count,
    serverUs: (serverCpuUs(postmaster) - serverBefore) / count,
  };
}

const cpuText = (p: Phase) =>
  `node ${p.nodeUs.toFixed(0)} µs${Number.isNaN(p.serverUs) ? '' : ` + server ${p.serverUs.toFixed(0)} µs`} CPU/op`;

const results: {
  submit: Phase;
  send: Phase;
  batched: Phase;
  chainedSend: Phase;
  floor: Phase | null;
}[] = [];
for (let round = 1; round <= rounds; round += 1) {
  const name = `bench_events_r${round}`;
  const url = await server.createDatabase(name);
  const engine = await engineOn(url);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const oneByOne = await parkWaits(engine, 'one', waiting);
  const batchedKeys = await parkWaits(engine, 'batch', waiting);
  const chainedKeys = await parkWaits(engine, 'chained', waiting, 'bench-chained');
  const floorKeys = values.floor ? await parkWaits(engine, 'floor', waiting) : [];
  // Statistics as autovacuum keeps them (it would analyze these tables within a minute): a
  // connection's cached plans are made for the tables as they are, not as they were empty.
  await pool.query('analyze');
  const floorPool = new pg.Pool({ connectionString: url, max: senders });
  // end() resolves before its sockets close: the forced drop of the database may still reach
  // one, as an error of the pool.
  for (const each of [pool, floorPool]) each.on('error', () => undefined);
  if (values.floor) await installEventFloor(floorPool);
  await parallelFor(senders, senders, (i) =>
    engine.submit('bench-job', { i: -1 - i }).then(() => {}),
  );
  await checkpoint(pool);

  const postmaster = await postmasterPid(pool);

  const submit = await phase(postmaster, waiting, () =>
    parallelFor(waiting, senders, (i) => engine.submit('bench-job', { i }).then(() => {})),
  );
  await checkpoint(pool);

  const send = await phase(postmaster, waiting, () =>
    sendOneByOne(engine, 'bench.approved', oneByOne),
  );
  await checkpoint(pool);

  const batched = await phase(postmaster, waiting, async () => {
    for (let first = 0; first < waiting; first += batch) {
      const answers = await engine.sendEvents(
        batchedKeys.slice(first, first + batch).map((key, j) => ({
          name: 'bench.approved',
          key,
          payload: { i: first + j },
        })),
      );
      if (answers.some((answer) => answer.tasks.length !== 1))
        throw new Error('a batched event missed');
    }
  });
  await checkpoint(pool);
  const chainedSend = await phase(postmaster, waiting, () =>
    sendOneByOne(engine, 'bench.chained', chainedKeys),
  );
  let floor: Phase | null = null;
  if (values.floor) {
    await checkpoint(pool);
    floor = await phase(postmaster, waiting, () =>
      parallelFor(waiting, senders, async (i) => {
        const done = await floorSend(floorPool, 'bench.approved', floorKeys[i] as string, { i });
        if (done !== 1) throw new Error(`floor event ${i} completed ${done} tasks`);
      }),
    );
  }
  const done = await completed(url);
  // Each chained workflow counts twice: its approval and its publish made ready.
  const expected = (values.floor ? 5 : 4) * waiting;
  if (done !== expected) throw new Error(`expected ${expected} completed waits, found ${done}`);
  results.push({ submit, send, batched, chainedSend, floor });
  const floorText =
    floor === null
      ? ''
      : `, floor ${floor.rate.toFixed(0)}/s (${(floor.rate / submit.rate).toFixed(2)}× submit)`;
  console.log(
    `round ${round}: submit ${submit.rate.toFixed(0)}/s, sendEvent ${send.rate.toFixed(0)}/s (${(send.rate / submit.rate).toFixed(2)}× submit), sendEvents ${batched.rate.toFixed(0)}/s, sendEvent with a step after ${chainedSend.rate.toFixed(0)}/s (${(chainedSend.rate / submit.rate).toFixed(2)}× submit)${floorText}`,
  );
  console.log(
    `  submit ${cpuText(submit)}; sendEvent ${cpuText(send)}; sendEvents ${cpuText(batched)}; with a step after ${cpuText(chainedSend)}${floor === null ? '' : `; floor ${cpuText(floor)}`}`,
  );
  await floorPool.end();
  await pool.end();
  await engine.close();
  await server.dropDatabase(name);
}
const median = (numbers: number[]) =>
  [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)] as number;
console.log(
  `median over ${rounds} rounds, ${waiting} waiting, ${senders} senders, server ${server.kind} ${server.version}: submit ${median(results.map((r) => r.submit.rate)).toFixed(0)}/s, sendEvent ${median(results.map((r) => r.send.rate)).toFixed(0)}/s, ratio ${median(results.map((r) => r.send.rate / r.submit.rate)).toFixed(2)}, sendEvents (batch ${batch}) ${median(results.map((r) => r.batched.rate)).toFixed(0)}/s, with a step after ${median(results.map((r) => r.chainedSend.rate)).toFixed(0)}/s ratio ${median(results.map((r) => r.chainedSend.rate / r.submit.rate)).toFixed(2)}${values.floor ? `, floor ratio ${median(results.map((r) => (r.floor?.rate ?? 0) / r.submit.rate)).toFixed(2)}` : ''}`,
);
await server.stop();
