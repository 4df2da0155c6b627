import { setTimeout as sleep } from 'node:timers/promises';
import { aliceToken } from '../../api/helpers';

/**
 * The load of the database-fault scenarios: `fault-chain` submits through the API process,
 * each with its own idempotency key and retried with that key until accepted (so a submit
 * whose answer was lost to the fault is deduplicated, never doubled), and /metrics reads.
 * Every answer is tallied by HTTP status and error code.
 */
export class ApiLoad {
  /** Answers by `<status> <code>` (`200 ok` for an accepted submit or a metrics page). */
  readonly answers: Record<string, number> = {};
  /** Accepted idempotency keys, with their workflow ids. */
  readonly accepted = new Map<string, string>();
  private readonly pending = new Set<Promise<void>>();
  private issued = 0;
  private running = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly graphqlUrl: string,
    private readonly options: { readonly submitsPerSecond: number; readonly stepMs: number },
  ) {}

  /** Starts submitting (and reading /metrics once a second). */
  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  /** Stops issuing new submits; resolves once every issued one was accepted. */
  async stop(timeoutMs = 60_000): Promise<void> {
    this.running = false;
    await this.loop;
    const deadline = sleep(timeoutMs, 'timeout' as const, { ref: false });
    const outcome = await Promise.race([Promise.all(this.pending), deadline]);
    if (outcome === 'timeout') {
      throw new Error(`${this.pending.size} submits still not accepted after ${timeoutMs} ms`);
    }
  }

  /** Submits issued so far (each ends accepted). */
  get submitted(): number {
    return this.issued;
  }

  /** Answers with a code other than the ones a database fault may give. */
  unexpectedAnswers(): Record<string, number> {
    return Object.fromEntries(
      Object.entries(this.answers).filter(
        ([answer]) => answer !== '200 ok' && answer !== '503 DATABASE_UNAVAILABLE',
      ),
    );
  }

  private async run(): Promise<void> {
    const everyMs = 1_000 / this.options.submitsPerSecond;
    let nextMetrics = 0;
    while (this.running) {
      const key = `load-${this.issued}`;
      this.issued += 1;
      const submit = this.submitUntilAccepted(key).finally(() => this.pending.delete(submit));
      this.pending.add(submit);
      if (performance.now() >= nextMetrics) {
        nextMetrics = performance.now() + 1_000;
        void this.readMetrics();
      }
      await sleep(everyMs);
    }
  }

  private async submitUntilAccepted(key: string): Promise<void> {
    for (;;) {
      const answer = await this.submitOnce(key);
      if (answer !== null) {
        this.accepted.set(key, answer);
        return;
      }
      await sleep(200);
    }
  }

  /** One submit; the workflow id when accepted, else null (the answer is tallied). */
  private async submitOnce(key: string): Promise<string | null> {
    try {
      const response = await fetch(this.graphqlUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json',
          authorization: `Bearer ${aliceToken}`,
        },
        body: JSON.stringify({
          query: `mutation($input: JSON!, $key: String!) {
            submitWorkflow(name: "fault-chain", input: $input, idempotencyKey: $key) { workflow { id } }
          }`,
          variables: { input: { n: this.issued, stepMs: this.options.stepMs }, key },
        }),
      });
      const body = (await response.json()) as {
        data?: { submitWorkflow?: { workflow: { id: string } } } | null;
        errors?: { extensions?: { code?: string } }[];
      };
      const id = body.data?.submitWorkflow?.workflow.id;
      const code = id === undefined ? (body.errors?.[0]?.extensions?.code ?? 'none') : 'ok';
      this.tally(`${response.status} ${code}`);
      return id ?? null;
    } catch (error) {
      // The API process did not answer at all: it must never happen (it would be down).
      this.tally(`no answer ${(error as Error).message}`);
      return null;
    }
  }

  private async readMetrics(): Promise<void> {
    const url = new URL('/metrics', this.graphqlUrl);
    try {
      const response = await fetch(url, { headers: { authorization: `Bearer ${aliceToken}` } });
      const text = await response.text();
      const code = response.ok ? 'ok' : (text.split(':')[0] ?? 'none');
      this.tally(`${response.status} ${code}`);
    } catch (error) {
      this.tally(`no answer ${(error as Error).message}`);
    }
  }

  private tally(answer: string): void {
    this.answers[answer] = (this.answers[answer] ?? 0) + 1;
  }
}
