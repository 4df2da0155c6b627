/**
 * `pnpm start`: Causeway's main job. Starts PostgreSQL (an embedded server whose data is
 * kept in ./.data, or DATABASE_URL), applies migrations, starts workers for publish-note,
 * submits a few workflows and prints their transitions live until they settle.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createEngine } from '@causeway/engine';
import { describeWorkflow, explain, type Transition, workflowMermaid } from '@causeway/workflow';
import pg from 'pg';
import { pino } from 'pino';
import { startEmbeddedPostgres } from '../../scripts/embedded-postgres';
import { publishNote } from './workflow';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const dataFolder = `${repoRoot}.data`;
mkdirSync(dataFolder, { recursive: true });

console.log(describeWorkflow(publishNote));
console.log(`\n${workflowMermaid(publishNote)}\n`);

const embedded =
  process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === ''
    ? await startEmbeddedPostgres({ repoRoot, dataDir: `${dataFolder}/postgres`, label: '[start]' })
    : null;
const databaseUrl =
  embedded === null
    ? (process.env.DATABASE_URL as string)
    : await ensureDatabase(embedded.url, 'causeway');

// Engine logs are pino JSON (workflow id, task id, attempt, holder on every line); here they
// go to a file so that the terminal shows the story.
const logFile = `${dataFolder}/causeway.log`;
const logger = pino({ level: 'info' }, pino.destination({ dest: logFile, sync: false }));
const engine = createEngine({ databaseUrl, workflows: [publishNote], logger, pollIntervalMs: 500 });
const applied = await engine.migrate();
console.log(
  `database ready (${embedded === null ? 'DATABASE_URL' : 'embedded'}); migrations applied now: ${applied.length === 0 ? 'none' : applied.join(', ')}`,
);
const worker = await engine.startWorker({ concurrency: { cpu: 2, default: 2, network: 4 } });

const run = Date.now().toString(36);
const submissions = [
  { noteId: `note-${run}-a`, version: 1, title: 'First note', body: 'Hello from Causeway' },
  { noteId: `note-${run}-b`, version: 3, title: 'Second note' },
  { noteId: `note-${run}-a`, version: 1, title: 'First note', body: 'Hello from Causeway' }, // a double click
  { noteId: `note-${run}-c`, version: 1, title: 'Withdrawn note' },
];
const ids: string[] = [];
for (const input of submissions) {
  const result = await engine.submit('publish-note', input);
  console.log(
    `submitted ${input.noteId} v${input.version}: workflow ${result.workflow.id} (${result.workflow.state})${result.deduplicated ? ' — deduplicated, same workflow' : ''}`,
  );
  if (!ids.includes(result.workflow.id)) ids.push(result.workflow.id);
}
const withdrawn = ids[ids.length - 1] as string;
const cancel = await engine.cancelWorkflow(withdrawn, { operator: 'demo' });
console.log(`cancelled ${withdrawn} as operator "demo": now ${cancel.state}\n`);

// Print each workflow's new transitions as they land, until every workflow has settled.
const printed = new Set<string>();
const labels = new Map(ids.map((id, index) => [id, `wf${index + 1}`]));
for (;;) {
  let settled = 0;
  for (const id of ids) {
    const workflow = await engine.getWorkflow(id);
    if (workflow === undefined) continue;
    const fresh = workflow.transitions.filter((row) => !printed.has(row.id));
    for (const line of explain(fresh).lines) console.log(`${labels.get(id)} ${line}`);
    for (const row of fresh) printed.add(row.id);
    if (['succeeded', 'cancelled', 'dead'].includes(workflow.state)) settled += 1;
  }
  if (settled === ids.length) break;
  await new Promise((resolve) => setTimeout(resolve, 200));
}

console.log('\nsummary:');
for (const id of ids) {
  const workflow = await engine.getWorkflow(id);
  const rows: Transition[] = workflow?.transitions ? [...workflow.transitions] : [];
  console.log(`  ${labels.get(id)} ${id}: ${workflow?.state} — ${explain(rows).summary}`);
}
console.log(`\nengine log (pino JSON): ${logFile}`);

await worker.stop({ drainMs: 5_000 });
await engine.close();
await embedded?.stop();

/** Creates `name` on the embedded server if needed; returns its URL. */
async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
