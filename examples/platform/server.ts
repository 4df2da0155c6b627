/**
 * A stand-in for the publishing platform (issue 4): a small node:http server that performs
 * effects (assets, posts, reviews), honours `Idempotency-Key`, fails on demand, delivers
 * receipts later, and counts what it has really done so tests can assert "exactly one post".
 *
 *   const platform = await startPlatform({ token: 'secret' });
 *   platform.configure({ endpoints: { publishPost: { sequence: [{ kind: 'unavailable', times: 2 }] } } });
 *   await fetch(`${platform.url}/posts`, { method: 'POST', headers: { 'idempotency-key': 'k' }, body });
 *   platform.stats().postsPublished; // 1
 *   await platform.close();
 *
 * Endpoints (JSON): POST /assets, POST /posts, GET /posts/:id, GET /submissions/:acceptanceId,
 * POST /reviews. Per request, `X-Platform-Mode` (or `?mode=`) picks a fault, e.g. `429;retry-after=3`
 * (grammar in modes.ts); `configure()` sets faults and scripted sequences per endpoint.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleRequest, type PlatformParts } from './handler';
import { IdempotencyStore } from './idempotency';
import { Modes, type PlatformConfig } from './modes';
import { ReceiptDispatcher } from './receipts';
import { PlatformRecords, type Receipt, type Verdict } from './records';
import { buildStats, type PlatformStats, RequestLog, type RequestRecord } from './stats';

export type { Endpoint } from './endpoints';
export { endpoints } from './endpoints';
export { modeHeader } from './handler';
export type {
  EndpointMode,
  Fault,
  FaultKind,
  FaultSpec,
  PlatformConfig,
} from './modes';
export { faultKinds, parseModeDirectives } from './modes';
export type { ReceiptMode } from './receipt-modes';
export type { DeliveryRecord, ReceiptCallback } from './receipts';
export { receiptDeliveryPolicy } from './receipts';
export type {
  PostRecord,
  Receipt,
  ReviewRecord,
  SubmissionRecord,
  SubmissionStatus,
  Verdict,
} from './records';
export type { PlatformStats, RequestRecord } from './stats';

export interface PlatformOptions extends PlatformConfig {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: a free port. */
  readonly port?: number;
  /** Called once per request, when it is answered (or left hanging). */
  readonly onRequest?: (record: RequestRecord) => void;
}

export interface Platform {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  /** A snapshot of the effects performed and the requests answered. */
  stats(): PlatformStats;
  /** Forgets all data, stats, idempotency keys and pending receipts; back to the start options. */
  reset(): void;
  /** Changes faults, token, receipts or callback; see PlatformConfig. */
  configure(next: PlatformConfig): void;
  /** Settles a pending post or review now (e.g. one accepted with `hold`), delivering its receipt. */
  settle(acceptanceId: string, verdict?: Verdict): Promise<Receipt>;
  /** Stops listening and closes every connection, hung ones included. Idempotent. */
  close(): Promise<void>;
}

export async function startPlatform(options: PlatformOptions = {}): Promise<Platform> {
  const { host = '127.0.0.1', port = 0, onRequest, ...initialConfig } = options;
  const closing = new AbortController();
  const modes = new Modes(initialConfig);
  const records = new PlatformRecords();
  const receipts = new ReceiptDispatcher({
    settle: (acceptanceId, verdict) => records.settle(acceptanceId, verdict),
    callback: () => modes.config.callback ?? null,
  });
  const parts: PlatformParts = {
    modes,
    records,
    idempotency: new IdempotencyStore(),
    log: new RequestLog(),
    receipts,
    signal: closing.signal,
    onRequest,
  };

  let open = 0;
  const server = createServer((request, response) => {
    open += 1;
    response.once('close', () => {
      open -= 1;
    });
    void handleRequest(parts, request, response);
  });
  // A hung request must stay hung until the client gives up or the platform closes.
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;

  let closed: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    stats: () => buildStats(records, parts.log, receipts, open),
    reset: () => {
      modes.reset();
      records.clear();
      parts.idempotency.clear();
      parts.log.clear();
      receipts.clear();
    },
    configure: (next) => modes.configure(next),
    settle: (acceptanceId, verdict) => receipts.settleNow(acceptanceId, verdict),
    close: () => {
      closed ??= new Promise<void>((resolve, reject) => {
        closing.abort();
        receipts.clear();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
