import type { Logger, ReadModel } from '@causeway/engine';
import { ApiError } from '../errors';
import { parseLsn } from './lsn';

/** The request header (and GraphQL `extensions` key) that carries a read-your-writes token. */
export const readAfterHeader = 'causeway-read-after';
export const readAfterExtension = 'readAfter';
/** The response header naming the server that answered a query: `primary` or `replica`. */
export const readFromHeader = 'causeway-read-from';

export type ReadServer = 'primary' | 'replica';

export interface ReadRoute {
  readonly server: ReadServer;
  readonly readModel: ReadModel;
}

export interface ReadRouterOptions {
  readonly primary: ReadModel;
  readonly replica: ReadModel;
  readonly logger: Logger;
  /** How often the replica's replay position is read in the background. Default 250 ms. */
  readonly pollIntervalMs?: number;
}

/**
 * Decides, per query, whether the replica may answer it. A query may read the replica once
 * the replica has replayed the WAL up to the position its client must see: the token it sent
 * (the primary's WAL position after its last mutation, from a response), and, for a client
 * with an operator token, the position after that operator's own last mutation through this
 * process (the sticky fallback for clients that send no token). A query whose position the
 * replica has not replayed yet is answered by the primary: it never waits, and it never sees
 * an older state than the one its client wrote. While the replica cannot be read, everything
 * goes to the primary.
 */
export class ReadRouter {
  /** The highest replay position the replica reported; it only grows. */
  private replayed = 0n;
  private healthy = false;
  /** Whether the replica has answered or failed at least once (to log changes only). */
  private known = false;
  private readonly lastWrite = new Map<string, bigint>();
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: ReadRouterOptions) {}

  /** Reads the replica's position now and then every poll interval. */
  async start(): Promise<void> {
    await this.refresh();
    this.schedule();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
  }

  /**
   * After a mutation: the primary's WAL position, past the mutation's commit. It is the token
   * the client sends back; the operator's next queries need it too, token or not.
   */
  async afterWrite(operator: string | null): Promise<string | null> {
    const { lsn } = await this.options.primary.walPosition();
    const position = parseLsn(lsn);
    if (position === null) return null;
    if (operator !== null && position > (this.lastWrite.get(operator) ?? 0n)) {
      this.lastWrite.set(operator, position);
    }
    return lsn;
  }

  /** Where a query reads. `token` is what the client sent (header or extensions), if anything. */
  async route(request: { token: string | null; operator: string | null }): Promise<ReadRoute> {
    let needed = 0n;
    if (request.token !== null) {
      const position = parseLsn(request.token);
      if (position === null) {
        throw new ApiError(
          'BAD_USER_INPUT',
          `${readAfterHeader} must be a WAL position as a mutation's response gave it (like 16/B374D848)`,
        );
      }
      needed = position;
    }
    const written = request.operator === null ? undefined : this.lastWrite.get(request.operator);
    if (written !== undefined && written > needed) needed = written;
    if (this.healthy && needed > this.replayed) await this.refresh();
    if (!this.healthy || needed > this.replayed) return this.primary();
    if (request.operator !== null && this.lastWrite.get(request.operator) === written) {
      // Replayed (and no newer write meanwhile): the operator needs nothing more than anyone.
      this.lastWrite.delete(request.operator);
    }
    return { server: 'replica', readModel: this.options.replica };
  }

  private primary(): ReadRoute {
    return { server: 'primary', readModel: this.options.primary };
  }

  /** One read of the replica's position at a time; callers that arrive meanwhile share it. */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const position = parseLsn((await this.options.replica.walPosition()).lsn);
        if (position !== null && position > this.replayed) this.replayed = position;
        if (!this.healthy) this.options.logger.info('the read replica answers; queries read it');
        this.healthy = true;
      } catch (error) {
        if (this.healthy || !this.known) {
          this.options.logger.warn(
            { err: error },
            'the read replica does not answer; queries read the primary',
          );
        }
        this.healthy = false;
      }
      this.known = true;
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void this.refresh().then(() => this.schedule());
    }, this.options.pollIntervalMs ?? 250);
    this.timer.unref();
  }
}
