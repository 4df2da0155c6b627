/**
 * `pnpm bench:operator-face [--history 1000000] [--samples 40] [--drain 5000]`: what the
 * operator's faces and the claim cost with a long history. In one database: a `/metrics` scrape, the dashboard's first page (`GET
 * /`, the latest workflows of every state), `why` (GraphQL `workflow { blockers }`, what `causeway why` asks),
 * and a workflow's dashboard page, each timed over real HTTP against a running API server with
 * live work: workflows waiting for events, tasks leased by a busy worker, tasks ready in a full
 * queue and in a queue no worker serves. Timed first with no history, then again after
 * `--history` finished workflows are written, so the second set and the ratios show what the
 * history costs. Medians and p95 in milliseconds. The claim is timed alike: `--drain` one-step
 * workflows drained by a worker of the same engine, empty and with the history (workflows/s). `--keep` leaves the database for a look at
 * the plans (DATABASE_URL only: an embedded server is deleted on exit).
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createApiServer } from '@causeway/api';
import { createEngine } from '@causeway/engine';
import { defineWorkflow, step, workflow } from '@causeway/workflow';
import pg from 'pg';
import { pino } from 'pino';
import { z } from 'zod';
import { historySql } from './causeway-history';
import { now, sleep } from './clock';
import { drainThroughput } from './history-drain';
import { checkpoint, startServer } from './server';

const { values } = parseArgs({
  options: {
    history: { type: 'string', default: '1000000' },
    samples: { type: 'string', default: '40' },
    drain: { type: 'string', default: '5000' },
    keep: { type: 'boolean', default: false },
  },
});
const history = Number(values.history);
const samples = Number(values.samples);
const drainN = Number(values.drain);

const awaited = workflow({ name: 'face-awaited', input: z.object({ id: z.string() }) })
  .event('approval', { name: 'face.approved', key: (ctx) => ctx.input.id, timeoutMs: 86_400_000 })
  .build();
let release: () => void = () => {};
const held = new Promise<void>((resolve) => {
  release = resolve;
});
const busy = defineWorkflow({
  name: 'face-busy',
  input: z.object({ i: z.number() }),
  steps: { work: step({ queue: 'busy', run: () => held.then(() => null) }) },
});
const unserved = defineWorkflow({
  name: 'face-unserved',
  input: z.object({ i: z.number() }),
  steps: { work: step({ queue: 'nobody', run: () => null }) },
});
const drained = { seen: 0 };
const noop = defineWorkflow({
  name: 'bench-noop',
  input: z.object({ i: z.number() }),
  steps: {
    only: step({
      run: () => {
        drained.seen += 1;
        return null;
      },
    }),
  },
});

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const server = await startServer(repoRoot);
const url = await server.createDatabase('bench_operator_face');
const logger = pino({ level: 'silent' });
const engine = createEngine({
  databaseUrl: url,
  workflows: [awaited, busy, unserved, noop],
  logger,
});
await engine.migrate();
const worker = await engine.startWorker({ queues: ['busy'], concurrency: 4 });
// The API server starts again after the history is written, as it would have been running
// while the history grew: its log reader (metrics) starts at the log's end, not 6,000,000
// rows behind it.
const startApi = async () => {
  const api = createApiServer({
    engine,
    workflows: [awaited, busy, unserved, noop],
    operators: [{ name: 'bench', token: 'bench-token-0123456789abcdef' }],
    databaseUrl: url,
    logger,
  });
  const { url: graphqlUrl } = await api.listen({ port: 0, host: '127.0.0.1' });
  return { api, graphqlUrl, origin: new URL(graphqlUrl).origin };
};
let faceApi = await startApi();

const waitingIds: string[] = [];
for (let i = 0; i < 50; i += 1) {
  waitingIds.push((await engine.submit('face-awaited', { id: `n${i}` })).workflow.id);
}
for (let i = 0; i < 20; i += 1) await engine.submit('face-busy', { i });
for (let i = 0; i < 10; i += 1) await engine.submit('face-unserved', { i });
await sleep(1_000); // the busy worker leases its four

async function get(path: string): Promise<void> {
  const response = await fetch(`${faceApi.origin}${path}`);
  const body = await response.text();
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${body.slice(0, 200)}`);
}
async function why(id: string): Promise<void> {
  const response = await fetch(faceApi.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'query ($id: ID!) { workflow(id: $id) { state blockers { step code message } } }',
      variables: { id },
    }),
  });
  const answer = (await response.json()) as {
    data?: { workflow: { blockers: unknown[] } | null };
    errors?: unknown;
  };
  if (answer.data?.workflow?.blockers.length !== 1) throw new Error(JSON.stringify(answer));
}

type Timing = { median: number; p95: number };
async function time(run: (i: number) => Promise<void>): Promise<Timing> {
  for (let i = 0; i < 3; i += 1) await run(i); // warm caches and prepared statements
  const ms: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    const started = now();
    await run(i);
    ms.push(now() - started);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] as number;
  return { median: at(0.5), p95: at(0.95) };
}
const faces = {
  scrape: () => get('/metrics'),
  'dashboard first page': () => get('/'),
  why: (i: number) => why(waitingIds[i % waitingIds.length] as string),
  'why, engine.blockers': async (i: number) => {
    const blockers = await engine.blockers(waitingIds[i % waitingIds.length] as string);
    if (blockers?.length !== 1) throw new Error(`blockers: ${JSON.stringify(blockers)}`);
  },
  'workflow page': (i: number) => get(`/workflows/${waitingIds[i % waitingIds.length]}`),
} as const;
async function timeAll(): Promise<Record<string, Timing>> {
  const timings: Record<string, Timing> = {};
  for (const [name, run] of Object.entries(faces)) timings[name] = await time(run);
  return timings;
}

const empty = await timeAll();
const drainEmpty = await drainThroughput(engine, 'bench-noop', drainN, drained);
await faceApi.api.close();
const pool = new pg.Pool({ connectionString: url, max: 1 });
const seeded = now();
for (let done = 0; done < history; done += 100_000) {
  await pool.query(historySql, [Math.min(100_000, history - done), 'bench-noop']);
}
await pool.query('vacuum analyze');
await checkpoint(pool);
console.log(`wrote ${history} finished workflows in ${((now() - seeded) / 1000).toFixed(0)} s`);
faceApi = await startApi();
const full = await timeAll();
const drainFull = await drainThroughput(engine, 'bench-noop', drainN, drained);

const f = (n: number) => n.toFixed(1);
console.log(
  `\n${server.kind} ${server.version}, ${samples} samples each (ms)\n` +
    `| face | empty: median | p95 | ${history} finished: median | p95 | ratio (medians) |\n|---|---|---|---|---|---|`,
);
for (const name of Object.keys(faces)) {
  const a = empty[name] as Timing;
  const b = full[name] as Timing;
  console.log(
    `| ${name} | ${f(a.median)} | ${f(a.p95)} | ${f(b.median)} | ${f(b.p95)} | ${(b.median / a.median).toFixed(2)} |`,
  );
}
console.log(
  `\n| claim: drain ${drainN} one-step workflows, 1×10 in-process | empty: ${drainEmpty.toFixed(0)}/s | ${history} finished: ${drainFull.toFixed(0)}/s | ratio ${(drainFull / drainEmpty).toFixed(2)} |`,
);
release();
await pool.end();
await faceApi.api.close();
await worker.stop({ drainMs: 5_000 });
await engine.close();
if (values.keep) console.log(`kept ${url}`);
else await server.dropDatabase('bench_operator_face');
await server.stop();
