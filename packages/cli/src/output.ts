import { type CliError, exitCodes } from './exit-codes';
import type { Style } from './style';

/** Where a command's results and errors go, as JSON (`--json`) or as text for people. */
export interface Output {
  readonly json: boolean;
  readonly style: Style;
  /** A command's result: pretty JSON of `data` with --json, else `human()`. */
  result(data: unknown, human: () => string): void;
  /** One line of a stream: `data` as one JSON line (NDJSON) with --json, else `human`. */
  line(data: unknown, human: string): void;
  /** A failure: `{ "error": … }` on stdout with --json, else a message on stderr. */
  error(error: CliError, hint?: string): void;
}

export interface Streams {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

export function createOutput(streams: Streams, json: boolean, style: Style): Output {
  return {
    json,
    style,
    result(data, human) {
      streams.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
    },
    line(data, human) {
      streams.stdout.write(json ? `${JSON.stringify(data)}\n` : `${human}\n`);
    },
    error(error, hint) {
      if (json) {
        const body = {
          error: {
            kind: error.kind,
            code: error.code,
            exitCode: exitCodes[error.kind],
            message: error.message,
          },
        };
        streams.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
      } else {
        streams.stderr.write(
          `causeway: ${error.message}${hint === undefined ? '' : `\n${hint}`}\n`,
        );
      }
    },
  };
}
