import pg from 'pg';
import { channelListen } from '../db/notify-channels';
import type { Logger } from '../logger';
import { Backoff } from './reconnect-backoff';

/**
 * One LISTEN connection per channel and process (R5): notifications only wake readers
 * early; the database stays the truth and polling covers anything lost while disconnected.
 * Listeners get each payload, and `*` after every (re)connect, when something may have been
 * missed.
 */
export class Notifier {
  private client: pg.Client | null = null;
  private readonly listeners = new Set<(queue: string) => void>();
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private starting: Promise<void> | null = null;
  /** Reset by a LISTEN that succeeds: a server that is away is not asked every second. */
  private readonly backoff = new Backoff();
  /** Clients already given up on: their later 'error' and 'end' events schedule nothing. */
  private readonly dropped = new WeakSet<pg.Client>();

  constructor(
    private readonly connectionString: string,
    private readonly logger: Logger,
    private readonly channel: string,
  ) {}

  /** Subscribes to wake-ups; returns the unsubscribe function. Connects on first use. */
  async subscribe(listener: (queue: string) => void): Promise<() => void> {
    this.listeners.add(listener);
    await this.ensureConnected();
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private ensureConnected(): Promise<void> {
    if (this.client !== null || this.closed) return Promise.resolve();
    this.starting ??= this.connect().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('notification', (message) => {
      if (message.channel !== this.channel) return;
      for (const listener of this.listeners) listener(message.payload ?? '');
    });
    client.on('error', (error) => {
      this.logger.warn(
        { err: error },
        `LISTEN ${this.channel} failed; polling covers until it is back`,
      );
      this.dropAndReconnect(client);
    });
    client.on('end', () => this.dropAndReconnect(client));
    try {
      await client.connect();
      await channelListen(client, this.channel);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      if (this.backoff.failing > 0) {
        this.logger.info({ failures: this.backoff.failing }, `LISTEN ${this.channel} is back`);
      }
      this.backoff.succeeded();
      // Anything sent while we were away is lost: wake everyone once.
      for (const listener of this.listeners) listener('*');
    } catch (error) {
      this.logger.warn({ err: error }, `could not LISTEN ${this.channel}`);
      this.dropAndReconnect(client);
    }
  }

  private dropAndReconnect(client: pg.Client): void {
    if (this.dropped.has(client)) return;
    this.dropped.add(client);
    if (this.client === client) this.client = null;
    client.end().catch(() => undefined);
    if (this.closed || this.reconnectTimer !== null) return;
    const retryInMs = this.backoff.failed();
    this.logger.info(
      { failures: this.backoff.failing, retryInMs },
      `LISTEN ${this.channel}: reconnecting in ${retryInMs} ms`,
    );
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.ensureConnected();
    }, retryInMs);
    this.reconnectTimer.unref();
  }
}
