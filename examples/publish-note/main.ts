/**
 * `pnpm start`: Causeway's main job. Starts PostgreSQL (an embedded server whose data is
 * kept in ./.data, or DATABASE_URL), applies migrations, starts the fake publishing platform,
 * workers for publish-note and the GraphQL API, submits a few notes and prints their
 * transitions live until they settle: editors approve two through GraphQL `sendEvent` (one
 * before its step waits), one approval never comes (its wait times out, shortened for the
 * demo), one note is withdrawn, one is scheduled with `delayMs`, and a digest schedule ticks
 * every minute. Then it keeps serving the API until Ctrl-C (or exits at once with
 * CAUSEWAY_DEMO_EXIT=1). CAUSEWAY_DATA_DIR moves ./.data (the embedded data and the engine
 * log); CAUSEWAY_API_PORT moves the API off port 4000 (0: a free port).
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createEngine, type Engine } from '@causeway/engine';
import { startPlatform } from '@causeway/example-platform/server.ts';
import { describeWorkflow, explain, type Transition, workflowMermaid } from '@causeway/workflow';
import pg from 'pg';
import { pino } from 'pino';
import { startEmbeddedPostgres } from '../../scripts/embedded-postgres';
import { type Approval, sendApproval } from './approvals';
import { digestEveryMinute, noteDigest } from './digest';
import { recordPlatformReceipts } from './platform-receipts';
import { serveApi } from './serve';
import { platformChannel, publishNoteRateLimits, publishNoteWithPlatform } from './with-platform';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const dataFolder = process.env.CAUSEWAY_DATA_DIR || `${repoRoot}.data`; // also holds the engine log
mkdirSync(dataFolder, { recursive: true });
const service = new AbortController(); // the service's root signal (R6)

const embedded =
  process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === ''
    ? await startEmbeddedPostgres({ repoRoot, dataDir: `${dataFolder}/postgres`, label: '[start]' })
    : null;
const databaseUrl =
  embedded === null
    ? (process.env.DATABASE_URL as string)
    : await ensureDatabase(embedded.url, 'causeway');

// The platform stands in for the outside world; its review receipts come back through the engine.
let engine: Engine | undefined;
const platform = await startPlatform({
  endpoints: { requestReview: { receipt: { delayMs: 300 } } },
  callback: recordPlatformReceipts(() => engine),
});
// Editors have days to approve; the demo's wait for the approval that never comes is short.
const approvalTimeoutMs = 6_000;
const publishNote = publishNoteWithPlatform({ url: platform.url, approvalTimeoutMs });

console.log(describeWorkflow(publishNote));
console.log(`\n${workflowMermaid(publishNote)}\n`);

// Engine logs are pino JSON (workflow id, task id, attempt, holder on every line); here they
// go to a file so that the terminal shows the story.
const logFile = `${dataFolder}/causeway.log`;
const logger = pino({ level: 'info' }, pino.destination({ dest: logFile, sync: false }));
engine = createEngine({
  databaseUrl,
  workflows: [publishNote, noteDigest],
  schedules: [digestEveryMinute],
  channels: [platformChannel({ url: platform.url })],
  rateLimits: publishNoteRateLimits,
  logger,
  pollIntervalMs: 500,
  signal: service.signal,
});
const applied = await engine.migrate();
console.log(
  `database ready (${embedded === null ? 'DATABASE_URL' : 'embedded'}); migrations applied now: ${applied.length === 0 ? 'none' : applied.join(', ')}`,
);
console.log(`publishing platform (fake) on ${platform.url}`);
const worker = await engine.startWorker({ concurrency: { cpu: 2, default: 2, network: 4 } });
const api = await serveApi({
  engine,
  databaseUrl,
  logger,
  signal: service.signal,
  workflows: [publishNote, noteDigest],
});
console.log(`${api.banner}\n`);
for (const view of await engine.schedules()) {
  console.log(
    `schedule ${view.name}: "${view.cron}" in ${view.timezone}, next tick ${view.nextTickAt?.toISOString() ?? 'none'}`,
  );
}

const run = Date.now().toString(36);
const note = (letter: string) => `note-${run}-${letter}`;
// The first note also goes to three platforms, as child workflows; one platform retired its API.
const first = {
  noteId: note('a'),
  version: 1,
  title: 'First note',
  body: 'Hello from Causeway',
  platforms: ['mastodon', 'bluesky', 'myspace'],
};
const submissions = [
  { input: first },
  { input: { noteId: note('b'), version: 3, title: 'Second note' } },
  { input: first }, // a double click
  { input: { noteId: note('c'), version: 1, title: 'Withdrawn note' } },
  { input: { noteId: note('d'), version: 1, title: 'Note nobody approves' } },
  { input: { noteId: note('e'), version: 1, title: 'Scheduled note' }, delayMs: 3_000 },
];
const ids: string[] = [];
for (const { input, delayMs } of submissions) {
  const result = await engine.submit(
    'publish-note',
    input,
    delayMs === undefined ? {} : { delayMs },
  );
  console.log(
    `submitted ${input.noteId} v${input.version}${delayMs === undefined ? '' : ` to start in ${delayMs} ms`}: workflow ${result.workflow.id} (${result.workflow.state})${result.deduplicated ? ' — deduplicated, same workflow' : ''}`,
  );
  if (!ids.includes(result.workflow.id)) ids.push(result.workflow.id);
}
const withdrawn = ids[2] as string;
const cancel = await engine.cancelWorkflow(withdrawn, {
  operator: 'demo',
  reason: 'withdrawn by the author',
});
console.log(`cancelled ${withdrawn} as operator "demo": now ${cancel.state}`);
// The editors answer through GraphQL: b before its approval step even waits (kept, R37).
const approve = async (approval: Approval) => {
  const answer =
    api.demoToken === null
      ? await engine?.sendEvent('note.approved', approval.noteId, approval).then((sent) => ({
          ...sent,
          tasks: sent.tasks.map((task) => ({ id: task.taskId, ...task })),
        }))
      : await sendApproval({ url: api.url, token: api.demoToken }, approval);
  const completed = answer?.tasks.map((task) => `${task.step} ${task.state}`).join(', ');
  console.log(
    `sendEvent note.approved (key ${approval.noteId}) by ${approval.editor}: ${completed || 'no step waits yet, kept for it'}`,
  );
};
await approve({ noteId: note('b'), editor: 'grace', verdict: 'approved' });
const trigger = await engine.triggerSchedule(digestEveryMinute.name, {
  operator: 'demo',
  reason: 'show a digest now',
});
ids.push(trigger.workflow.id);
console.log(
  `triggered ${digestEveryMinute.name} as operator "demo": workflow ${trigger.workflow.id}\n`,
);
const labels = new Map(ids.map((id, index) => [id, `wf${index + 1}`]));
// What holds each workflow right now (the dashboard's and `causeway why`'s answer), without
// the steps that only wait for the step shown.
for (const id of ids) {
  const blockers = (await engine.blockers(id)) ?? [];
  for (const blocker of blockers.filter((b) => b.code !== 'upstream_pending')) {
    console.log(`why ${labels.get(id)}: ${blocker.code} — ${blocker.message}`);
  }
}
const approvals: Approval[] = [
  { noteId: note('a'), editor: 'ada', verdict: 'approved' },
  { noteId: note('e'), editor: 'ada', verdict: 'approved' },
];

// Print each workflow's new transitions as they land, until every workflow has settled.
const printed = new Set<string>();
for (;;) {
  let settled = 0;
  for (const id of ids) {
    const workflow = await engine.getWorkflow(id);
    if (workflow === undefined) continue;
    // An editor answers once the note waits for approval (d's editor never does).
    const waiting = workflow.tasks.find((task) => task.state === 'waiting');
    const answer = approvals.find(
      (approval) => approval.noteId === (workflow.input as { noteId?: string }).noteId,
    );
    if (waiting !== undefined && answer !== undefined) {
      approvals.splice(approvals.indexOf(answer), 1);
      await approve(answer);
    }
    const fresh = workflow.transitions.filter((row) => !printed.has(row.id));
    for (const line of explain(fresh).lines) console.log(`${labels.get(id)} ${line}`);
    for (const row of fresh) printed.add(row.id);
    // A step that just started children: why its workflow waits, down to the child that holds it.
    if (fresh.some((row) => row.reason === 'children_started')) {
      for (const blocker of (await engine.blockers(id)) ?? []) {
        if (blocker.code !== 'children_pending') continue;
        console.log(`why ${labels.get(id)}: ${blocker.code} — ${blocker.message}`);
      }
    }
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
// The first note's tree: what each platform's child workflow came to (`causeway tree` prints the
// same over the API).
const tree = await engine.children(ids[0] as string);
console.log(`\ntree of wf1 ${ids[0]}:`);
for (const { workflow: child, key } of tree.rows) {
  const found = await engine.getWorkflow(child.id);
  const failed = found?.tasks.find((task) => task.state === 'dead');
  const why = failed === undefined ? '' : ` — ${failed.lastErrorCategory}: ${failed.lastError}`;
  console.log(
    `  ${key.step}[${key.index}] ${child.name} ${(child.input as { platform?: string }).platform} ${child.id}: ${child.state}${why}`,
  );
}
// Mastodon answered its first post 429: the retry came at its Retry-After, and the account's
// rate limit was paused for every post until then (R51).
const mastodon = tree.rows.find(
  (row) => (row.workflow.input as { platform?: string }).platform === 'mastodon',
);
const throttled = mastodon === undefined ? undefined : await engine.explain(mastodon.workflow.id);
const pausedLine = throttled?.text
  .split('\n')
  .find((line) => line.includes('paused for every task'));
if (pausedLine !== undefined) console.log(`mastodon: ${pausedLine.trim()}`);
const effects = platform.stats();
console.log(
  `platform effects: ${effects.assetsUploaded} assets uploaded, ${effects.reviewsRequested} reviews, ${effects.postsPublished} posts published`,
);
console.log(`approval timeout: ${approvalTimeoutMs} ms in this demo (three days by default)`);
console.log(`engine log (pino JSON): ${logFile}`);

const shutdown = async () => {
  service.abort(); // stops the API and the engine's workers (graceful, R31)
  await worker.stop({ drainMs: 5_000 });
  await api.close();
  await engine?.close();
  await platform.close();
  await embedded?.stop();
};
if (process.env.CAUSEWAY_DEMO_EXIT === '1') {
  await shutdown();
} else {
  console.log(
    `\nserving the API on ${api.url}; ${digestEveryMinute.name} ticks every minute — Ctrl-C to stop`,
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void shutdown().then(() => process.exit(0)));
  }
}

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
