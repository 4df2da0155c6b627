import type { OptionSpec } from './command';

/** The local server `pnpm start` serves (examples/publish-note/serve.ts). */
export const defaultUrl = 'http://127.0.0.1:4000/graphql';
export const defaultTimeoutMs = 30_000;

/** Options every command takes, before or after the command's name. */
export const globalOptions: Readonly<Record<string, OptionSpec & { short?: string }>> = {
  url: {
    type: 'string',
    value: 'url',
    description: `the GraphQL endpoint (default: CAUSEWAY_URL, else ${defaultUrl})`,
  },
  token: {
    type: 'string',
    value: 'token',
    description:
      'the operator token; mutations need one, reads too unless the server is loopback-only (default: CAUSEWAY_TOKEN)',
  },
  json: { type: 'boolean', description: 'print JSON (docs/cli.md has each shape)' },
  'timeout-ms': {
    type: 'string',
    value: 'ms',
    description: `give up on a request after this long (default ${defaultTimeoutMs})`,
  },
  help: { type: 'boolean', short: 'h', description: 'show help' },
};

/** Options that take a value: the word after them is not the command's name. */
export function takesValue(token: string): boolean {
  if (!token.startsWith('--') || token.includes('=')) return false;
  return globalOptions[token.slice(2)]?.type === 'string';
}
