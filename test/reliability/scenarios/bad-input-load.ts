/**
 * Bad input under load (issue 19 §1): while worker processes run the load, fast-check throws
 * bad GraphQL requests at an API process over real HTTP, and bad submit / sendEvent calls at
 * the engine's API. Every answer is below 500, and every error carries a code from the
 * allowlist; the API process never exits and still answers afterwards; a set of parked
 * workflows (waiting for events nobody sends) is exactly as it was; the load drains and the
 * invariants hold.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { EngineError, engineErrorCodes } from '@causeway/engine';
import fc from 'fast-check';
import { expect } from 'vitest';
import { spawnFixture } from '../../api/fixtures/processes';
import { aliceToken, operators } from '../../api/helpers';
import { query } from '../../helpers/engine';
import {
  type BadEngineCall,
  type BadRequest,
  badEngineCall,
  badRequest,
} from '../support/bad-requests';
import { drainWithin } from '../support/drain';
import { assertInvariants, type InvariantCounts } from '../support/invariants';
import { driveLoad, type LoadShape, startLoadRig } from '../support/load-driver';

export interface BadInputLoadConfig extends LoadShape {
  readonly workers: number;
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly parked: number;
  readonly httpRequests: number;
  readonly engineCalls: number;
  readonly livenessBoundMs: number;
  readonly seed: number;
}

export interface BadInputLoadResult {
  readonly httpRequests: number;
  readonly engineCalls: number;
  /** Answers by HTTP status, and errors by code (HTTP and engine). */
  readonly statuses: Record<string, number>;
  readonly codes: Record<string, number>;
  /** Fuzzed submits and sends the engine accepted (valid by chance). */
  readonly accepted: number;
  readonly submitted: number;
  readonly drainMs: number;
  readonly invariants: InvariantCounts;
}

/** The codes a bad request may get: every stable API code but the unexpected ones. */
export const allowedApiCodes = [
  'BAD_USER_INPUT',
  'NOT_FOUND',
  'CONFLICT',
  'UNAUTHENTICATED',
  'QUERY_TOO_COMPLEX',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'PAYLOAD_TOO_LARGE',
];

/** The parked workflows' rows, tasks and log, as one comparable value. */
async function fingerprint(url: string, ids: readonly string[]): Promise<string> {
  const [row] = await query<{ print: string }>(
    url,
    `select concat_ws('|',
       (select md5(string_agg(w::text, ',' order by w.id)) from causeway_workflows w where w.id = any($1::uuid[])),
       (select md5(string_agg(t::text, ',' order by t.id)) from causeway_tasks t where t.workflow_id = any($1::uuid[])),
       (select md5(string_agg(x::text, ',' order by x.id)) from causeway_transitions x where x.workflow_id = any($1::uuid[]))) as print`,
    [ids],
  );
  return row?.print as string;
}

const tally = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

async function sendHttp(apiUrl: string, request: BadRequest) {
  const headers: Record<string, string> = { accept: 'application/graphql-response+json' };
  if (request.token) headers.authorization = `Bearer ${aliceToken}`;
  if (request.method === 'GET') {
    const target = new URL(apiUrl);
    target.searchParams.set('query', request.body);
    return fetch(target, { headers });
  }
  headers['content-type'] = request.contentType;
  return fetch(apiUrl, { method: 'POST', headers, body: request.body });
}

export async function runBadInputLoad(
  databaseUrl: string,
  config: BadInputLoadConfig,
): Promise<BadInputLoadResult> {
  const { engine, platform, pool } = await startLoadRig(databaseUrl, config);
  try {
    const api = spawnFixture(new URL('../fixtures/api-server.ts', import.meta.url), {
      CAUSEWAY_CHILD_DATABASE_URL: databaseUrl,
      CAUSEWAY_OPERATORS: JSON.stringify(operators),
    });
    const { url: apiUrl } = await api.ready(60_000);
    if (apiUrl === undefined) throw new Error('the API process reported no url');
    // Parked: waiting for events under keys nobody else can know.
    const parked = await engine.submitMany(
      Array.from({ length: config.parked }, () => ({
        name: 'rel-wait',
        input: { id: `parked-${randomUUID()}` },
      })),
    );
    const parkedIds = parked.map((result) => result.workflow.id);
    const before = await fingerprint(databaseUrl, parkedIds);

    const load = driveLoad(databaseUrl, engine, config, {
      check: () => pool.assertNoCrash(),
    });
    const statuses: Record<string, number> = {};
    const codes: Record<string, number> = {};
    const accepted: string[] = [];
    let acceptedCount = 0;
    await fc.assert(
      fc.asyncProperty(badRequest, async (request) => {
        const response = await sendHttp(apiUrl, request).catch((error: unknown) => {
          // Past the size limit the server answers 413 and closes without reading the rest, so
          // a client still writing may see the socket close instead (checked alive below).
          if (request.kind === 'oversized body') return null;
          throw error;
        });
        if (response === null) {
          tally(statuses, 'closed while sending');
          return;
        }
        const text = await response.text();
        tally(statuses, String(response.status));
        // The API logs what an unexpected error was (pino level 50): show it beside the answer.
        const logged = () =>
          api
            .output()
            .split('\n')
            .filter((line) => line.includes('"level":50'))
            .slice(-3)
            .join('\n');
        const context = `${request.kind}: ${response.status} ${text.slice(0, 300)}\n${text.includes('INTERNAL_SERVER_ERROR') ? logged() : ''}`;
        expect(response.status, context).toBeLessThan(500);
        const body = JSON.parse(text) as {
          data?: { submitWorkflow?: { workflow?: { id: string } } } | null;
          errors?: { extensions?: { code?: string } }[];
        };
        for (const error of body.errors ?? []) {
          const code = error.extensions?.code ?? 'none';
          tally(codes, code);
          expect(allowedApiCodes, context).toContain(code);
        }
        const id = body.data?.submitWorkflow?.workflow?.id;
        if (id !== undefined) accepted.push(id);
        if (body.errors === undefined) acceptedCount += 1;
      }),
      { numRuns: config.httpRequests, seed: config.seed, endOnFailure: true },
    );
    await fc.assert(
      fc.asyncProperty(badEngineCall, async (call: BadEngineCall) => {
        try {
          if (call.kind === 'submit') {
            const result = await engine.submit(call.name, call.input, {
              ...(call.key === null ? {} : { idempotencyKey: call.key }),
            });
            accepted.push(result.workflow.id);
          } else {
            await engine.sendEvent(call.name, call.key, call.payload);
          }
          acceptedCount += 1;
        } catch (error) {
          if (!(error instanceof EngineError)) throw error;
          tally(codes, `engine:${error.code}`);
          expect(engineErrorCodes).toContain(error.code);
        }
      }),
      { numRuns: config.engineCalls, seed: config.seed, endOnFailure: true },
    );

    // The API process is alive and answers; the parked workflows are exactly as they were.
    expect(api.process.exitCode).toBeNull();
    const health = await fetch(apiUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ definitions { name } }' }),
    });
    expect(health.status).toBe(200);
    expect(await fingerprint(databaseUrl, parkedIds)).toBe(before);

    const { submitted } = await load;
    const loadEnd = performance.now();
    const drainMs = await drainWithin(databaseUrl, loadEnd, config.livenessBoundMs, {
      exempt: [...parkedIds, ...accepted],
      check: () => pool.assertNoCrash(),
    });
    await pool.stop();
    await api.stop();
    const stats = platform.stats();
    const invariants = await assertInvariants({
      databaseUrl,
      submitted: [...submitted, ...parkedIds],
      // Parked ones wait on purpose; a fuzzed submit that was valid by chance may wait too.
      exempt: [...parkedIds, ...accepted],
      ledger: true,
      effects: [...stats.posts, ...stats.assets],
    });
    return {
      httpRequests: config.httpRequests,
      engineCalls: config.engineCalls,
      statuses,
      codes,
      accepted: acceptedCount,
      submitted: submitted.length,
      drainMs: Math.round(drainMs),
      invariants,
    };
  } finally {
    await platform.close();
  }
}
