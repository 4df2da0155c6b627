import { readFileSync } from 'node:fs';

let version: string | undefined;

/** This engine package's version (its package.json), read once, for the worker registry. */
export function engineVersion(): string {
  version ??= (
    JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version;
  return version;
}
