import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';

/**
 * A clean `worker.stop()` and `engine.close()` leave nothing behind that keeps the process
 * alive: in particular not the drain budget's timer (10 s by default), which must be cancelled
 * once the running attempts have drained.
 */
const database = useTestDatabase();
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/close-exit.ts', import.meta.url));

/** Well under the default drain budget of 10 s, well over what an idle exit takes. */
const exitWithinMs = 5_000;

let child: ChildProcess | undefined;
afterEach(() => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
  }
  child = undefined;
});

describe('closing an engine', () => {
  it('lets the process exit at once, without waiting for the drain budget', async () => {
    const spawned = spawn(process.execPath, ['--import', 'tsx', fixture], {
      cwd: repoRoot,
      env: { ...process.env, CAUSEWAY_CHILD_DATABASE_URL: database().url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = spawned;
    let output = '';
    const exited = new Promise<{ code: number | null; at: number }>((resolve) => {
      spawned.once('exit', (code) => resolve({ code, at: performance.now() }));
    });
    // When the child printed `closed` (its engine is closed), or null if it exited without.
    const closedAt = new Promise<number | null>((resolve) => {
      spawned.stdout.on('data', (data: Buffer) => {
        output += data.toString();
        if (output.includes('closed\n')) resolve(performance.now());
      });
      spawned.once('exit', () => resolve(null));
    });
    spawned.stderr.on('data', (data: Buffer) => {
      output += data.toString();
    });

    const closed = await closedAt;
    if (closed === null) throw new Error(`the child exited before closing its engine\n${output}`);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'still running'>((resolve) => {
      timer = setTimeout(() => resolve('still running'), exitWithinMs);
    });
    const result = await Promise.race([exited, late]);
    clearTimeout(timer);
    if (result === 'still running') {
      throw new Error(`the child was still running ${exitWithinMs} ms after closing\n${output}`);
    }
    expect(result.code, output).toBe(0);
    expect(result.at - closed).toBeLessThan(exitWithinMs);
  }, 60_000);
});
