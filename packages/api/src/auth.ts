import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** An operator and the bearer token that identifies them. */
export interface OperatorConfig {
  readonly name: string;
  readonly token: string;
}

/** Resolves bearer tokens to operator names. Tokens are kept only as SHA-256 digests. */
export interface OperatorDirectory {
  /** The operator named by `Authorization: Bearer <token>`; null when absent; throws never. */
  lookup(authorization: string | null | undefined): OperatorLookup;
  readonly size: number;
}

export type OperatorLookup =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'operator'; readonly name: string }
  | { readonly kind: 'invalid' };

/**
 * True for an address only this machine can reach (127.0.0.0/8, ::1, or 127.x mapped into
 * IPv6). `0.0.0.0`, `::` and LAN addresses are reachable by others: reads there need a token
 * unless `publicReads: true` says otherwise.
 */
export function isLoopbackAddress(address: string): boolean {
  return address === '::1' || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.test(address);
}

/** The shortest token accepted: anything shorter is guessable. */
export const minTokenLength = 16;
const namePattern = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/;

function digest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Builds the token directory. Names become transition actors (`operator:<name>`), so they are
 * short plain identifiers; tokens must be at least 16 characters and unique.
 */
export function operatorDirectory(operators: readonly OperatorConfig[]): OperatorDirectory {
  const byDigest = new Map<string, string>();
  for (const operator of operators) {
    if (typeof operator.name !== 'string' || !namePattern.test(operator.name)) {
      throw new Error(
        `operator name ${JSON.stringify(operator.name)} must be 1–100 letters, digits, ".", "_", "@" or "-"`,
      );
    }
    if (typeof operator.token !== 'string' || operator.token.length < minTokenLength) {
      throw new Error(
        `operator ${operator.name}: the token must be at least ${minTokenLength} characters`,
      );
    }
    const key = digest(operator.token);
    if (byDigest.has(key)) throw new Error(`operator ${operator.name}: the token is not unique`);
    byDigest.set(key, operator.name);
  }
  return {
    size: byDigest.size,
    lookup(authorization) {
      if (authorization === null || authorization === undefined || authorization === '') {
        return { kind: 'anonymous' };
      }
      const match = /^Bearer +(\S{1,4096})\s*$/i.exec(authorization);
      if (match === null) return { kind: 'invalid' };
      // The map is keyed by digest: the lookup time does not depend on how much of a guess matches.
      const name = byDigest.get(digest(match[1] as string));
      return name === undefined ? { kind: 'invalid' } : { kind: 'operator', name };
    },
  };
}

/**
 * Operators from the environment: `CAUSEWAY_OPERATORS_FILE` (a JSON file) or
 * `CAUSEWAY_OPERATORS` (inline JSON), each `[{ "name": "alice", "token": "…" }]`.
 * Neither set means no operator: every mutation is refused.
 */
export function loadOperators(env: NodeJS.ProcessEnv = process.env): OperatorConfig[] {
  const file = env.CAUSEWAY_OPERATORS_FILE;
  const text =
    file !== undefined && file !== '' ? readFileSync(file, 'utf8') : env.CAUSEWAY_OPERATORS;
  if (text === undefined || text.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('CAUSEWAY_OPERATORS(_FILE) must be JSON: [{ "name": "...", "token": "..." }]');
  }
  if (
    !Array.isArray(parsed) ||
    !parsed.every(
      (item) =>
        typeof item === 'object' &&
        item !== null &&
        typeof item.name === 'string' &&
        typeof item.token === 'string',
    )
  ) {
    throw new Error('CAUSEWAY_OPERATORS(_FILE) must be a list of { "name", "token" } objects');
  }
  return parsed.map((item) => ({ name: item.name, token: item.token }));
}
