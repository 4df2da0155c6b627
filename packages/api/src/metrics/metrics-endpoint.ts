import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type DefinedConcurrencyGroup,
  definedConcurrencyGroups,
  type Engine,
  isDatabaseUnavailableError,
  type Logger,
  type ReadModel,
} from '@causeway/engine';
import { minTokenLength, type OperatorDirectory, operatorDirectory } from '../auth';
import type { ReplicaLag } from '../replica/replica-connection';
import { createMetricSet, type MetricSet, showSnapshot } from './metrics-registry';
import { TransitionTally, type TransitionTallyOptions } from './transition-tally';

export interface MetricsOptions {
  /**
   * A bearer token for scrapers (default: CAUSEWAY_METRICS_TOKEN). When set, `/metrics` asks
   * for it (or an operator's token); when not, `/metrics` follows the GraphQL reads: open only
   * where reads are public (by default, on a loopback-only address).
   */
  readonly token?: string;
  /** The path served. Default `/metrics`. */
  readonly path?: string;
  /** How the log counters read the transition log. */
  readonly log?: TransitionTallyOptions;
}

/**
 * `GET /metrics` in Prometheus' text format: the live gauges read at the scrape (one snapshot,
 * partial indexes only), the log counters kept by a background tally of the transition log,
 * and the handler durations of this process's workers. Scrapes that arrive together share one
 * read of the database.
 */
export class MetricsEndpoint {
  readonly path: string;
  private readonly metrics: MetricSet;
  private readonly tally: TransitionTally;
  private readonly scraper: OperatorDirectory | null;
  private readonly stopObserving: () => void;
  private rendering: Promise<string> | null = null;
  /** The engine's definitions are fixed, so their groups are read once. */
  private readonly concurrencyGroups: readonly DefinedConcurrencyGroup[];

  constructor(
    private readonly options: {
      readonly engine: Engine;
      readonly readModel: ReadModel;
      readonly operators: OperatorDirectory;
      /** Read at each scrape: the server decides it when it binds its address. */
      readonly publicReads: () => boolean;
      readonly logger: Logger;
      readonly metrics: MetricsOptions;
      /** The read replica's lag, read at each scrape (absent without a replica). */
      readonly replicaLag?: () => Promise<ReplicaLag>;
    },
  ) {
    this.path = options.metrics.path ?? '/metrics';
    this.concurrencyGroups = definedConcurrencyGroups(options.engine.definitions);
    this.metrics = createMetricSet();
    this.tally = new TransitionTally(
      options.readModel.transitionEdgeReader(),
      this.metrics,
      options.logger,
      options.metrics.log,
    );
    const token = options.metrics.token ?? process.env.CAUSEWAY_METRICS_TOKEN;
    if (token !== undefined && token !== '' && token.length < minTokenLength) {
      throw new Error(`the metrics token must be at least ${minTokenLength} characters`);
    }
    this.scraper =
      token === undefined || token === ''
        ? null
        : operatorDirectory([{ name: 'metrics-scraper', token }]);
    const duration = this.metrics.handlerDuration;
    this.stopObserving = options.engine.onHandlerRun((run) =>
      duration.observe(
        { workflow: run.workflow, step: run.step, outcome: run.outcome },
        run.seconds,
      ),
    );
  }

  /** Starts the log counters at the log's current end. */
  start(): Promise<void> {
    return this.tally.start();
  }

  async close(): Promise<void> {
    this.stopObserving();
    await this.tally.close();
  }

  /** Answers a request for `path`. */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      reply(response, 405, 'METHOD_NOT_ALLOWED', `${this.path} answers GET and HEAD`, {
        allow: 'GET, HEAD',
      });
      return;
    }
    const refusal = this.refusal(request.headers.authorization);
    if (refusal !== null) {
      reply(response, 401, 'UNAUTHENTICATED', refusal, {
        'www-authenticate': 'Bearer realm="causeway-metrics"',
      });
      return;
    }
    let text: string;
    try {
      this.rendering ??= this.render().finally(() => {
        this.rendering = null;
      });
      text = await this.rendering;
    } catch (error) {
      this.options.logger.error({ err: error }, 'reading the metrics failed');
      reply(
        response,
        503,
        isDatabaseUnavailableError(error) ? 'DATABASE_UNAVAILABLE' : 'SERVICE_UNAVAILABLE',
        'the metrics could not be read from the database',
      );
      return;
    }
    response.writeHead(200, {
      'content-type': this.metrics.registry.contentType,
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
    });
    response.end(request.method === 'HEAD' ? undefined : text);
  }

  /** Why the request may not read the metrics, or null when it may. */
  private refusal(authorization: string | undefined): string | null {
    const required = this.scraper !== null || !this.options.publicReads();
    if (authorization === undefined || authorization === '') {
      return required ? 'send Authorization: Bearer <metrics or operator token>' : null;
    }
    // A token sent must be a known one, even where none is required (as for GraphQL reads).
    const known =
      this.scraper?.lookup(authorization).kind === 'operator' ||
      this.options.operators.lookup(authorization).kind === 'operator';
    return known ? null : 'the bearer token is not valid';
  }

  private async render(): Promise<string> {
    const rateLimits = this.options.engine.declaredRateLimits;
    showSnapshot(
      this.metrics,
      await this.options.readModel.metricsSnapshot(rateLimits),
      this.concurrencyGroups,
      rateLimits,
    );
    if (this.options.replicaLag !== undefined) await this.showReplicaLag(this.options.replicaLag);
    return this.metrics.registry.metrics();
  }

  /** A replica that does not answer has no lag series (its absence is what to alert on). */
  private async showReplicaLag(read: () => Promise<ReplicaLag>): Promise<void> {
    this.metrics.replicaLagBytes.reset();
    this.metrics.replicaLagSeconds.reset();
    try {
      const lag = await read();
      this.metrics.replicaLagBytes.set({ replica: lag.replica }, lag.bytes);
      this.metrics.replicaLagSeconds.set({ replica: lag.replica }, lag.seconds);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'reading the read replica lag failed');
    }
  }
}

function reply(
  response: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = `${code}: ${message}\n`;
  response.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  response.end(body);
}
