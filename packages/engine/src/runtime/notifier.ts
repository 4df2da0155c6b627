import pg from 'pg';
import type { Logger } from '../logger';

export const wakeupChannel = 'causeway_wakeup';

/**
 * One LISTEN connection per engine (R5): notifications only wake workers early; the
 * database stays the truth and polling covers anything lost while disconnected.
 */
export class Notifier {
  private client: pg.Client | null = null;
  private readonly listeners = new Set<(queue: string) => void>();
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private starting: Promise<void> | null = null;

  constructor(
    private readonly connectionString: string,
    private readonly logger: Logger,
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
      if (message.channel !== wakeupChannel) return;
      for (const listener of this.listeners) listener(message.payload ?? '');
    });
    client.on('error', (error) => {
      this.logger.warn(
        { err: error },
        'wake-up connection failed; polling covers until it is back',
      );
      this.dropAndReconnect(client);
    });
    client.on('end', () => this.dropAndReconnect(client));
    try {
      await client.connect();
      await client.query(`listen ${wakeupChannel}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      // Anything sent while we were away is lost: wake everyone once.
      for (const listener of this.listeners) listener('*');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not LISTEN for wake-ups; retrying');
      this.dropAndReconnect(client);
    }
  }

  private dropAndReconnect(client: pg.Client): void {
    if (this.client === client) this.client = null;
    client.end().catch(() => undefined);
    if (this.closed || this.reconnectTimer !== null) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.ensureConnected();
    }, 1_000);
    this.reconnectTimer.unref();
  }
}
