/** The `causeway` executable: runs the command line and exits with its code (docs/cli.md). */
import { runCli } from './run';

const interrupted = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => interrupted.abort());
}
const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  isTTY: process.stdout.isTTY === true,
  signal: interrupted.signal,
});
// Let stdout drain (a pipe may still hold output), then exit: open sockets do not keep it alive.
process.stdout.write('', () => process.exit(code));
