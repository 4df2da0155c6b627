import { readFileSync } from 'node:fs';
import type { Invocation } from './command';
import { usageError } from './exit-codes';

/**
 * A JSON value given as `--<name> <json>` or `--<name>-file <path>` (`-`: standard input);
 * `fallback` when neither is given. Text that is not JSON is a usage error.
 */
export function jsonOption(invocation: Invocation, name: string, fallback: unknown): unknown {
  const inline = invocation.option(name);
  const file = invocation.option(`${name}-file`);
  if (inline !== undefined && file !== undefined) {
    throw usageError(`give --${name} or --${name}-file, not both`);
  }
  if (inline === undefined && file === undefined) return fallback;
  let text: string;
  let source: string;
  if (file !== undefined) {
    source = file === '-' ? 'standard input' : file;
    try {
      text = readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch (error) {
      throw usageError(`cannot read --${name}-file ${source}: ${(error as Error).message}`);
    }
  } else {
    text = inline as string;
    source = `--${name}`;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usageError(`${source} is not JSON: ${(error as Error).message}`);
  }
}

/** The `--<name>` / `--<name>-file` pair of options for a JSON value. */
export function jsonOptions(name: string, what: string) {
  return {
    [name]: { type: 'string', value: 'json', description: `${what}, as JSON` },
    [`${name}-file`]: {
      type: 'string',
      value: 'path',
      description: `${what} from a JSON file (- for standard input)`,
    },
  } as const;
}
