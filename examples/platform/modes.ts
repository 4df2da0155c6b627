import { type Endpoint, isEndpoint } from './endpoints';
import type { ReceiptMode } from './receipt-modes';
import type { ReceiptCallback } from './receipts';

/**
 * How a request is answered. Faults before the effect perform nothing; the `*_after_effect`
 * ones and `slow` perform the effect first, so the client cannot tell whether it happened.
 */
export const faultKinds = [
  /** Answer normally. */
  'ok',
  /** Perform the effect, then answer after `delayMs` (default 1000). */
  'slow',
  /** 429 with `Retry-After: retryAfterSeconds` (default 1); nothing performed. */
  'rate_limited',
  /** 503 (with `Retry-After` only when `retryAfterSeconds` is set); nothing performed. */
  'unavailable',
  /** Perform the effect, then answer 503 anyway (a gateway that lost the answer). */
  'unavailable_after_effect',
  /** 401, as if the authorization had been revoked; nothing performed. */
  'unauthorized',
  /** Accept the connection and never answer; nothing performed. */
  'timeout',
  /** Perform the effect and never answer. */
  'timeout_after_effect',
] as const;
export type FaultKind = (typeof faultKinds)[number];

export interface Fault {
  readonly kind: FaultKind;
  /** `slow`: how long after the effect the answer comes. */
  readonly delayMs?: number;
  /** `rate_limited` and `unavailable`: the `Retry-After` header, in seconds. */
  readonly retryAfterSeconds?: number;
  /** In a `sequence`: how many consecutive requests meet this fault (default 1). */
  readonly times?: number;
}
/** A fault, or just its kind with default parameters. */
export type FaultSpec = FaultKind | Fault;

export interface EndpointMode {
  /** The fault every request meets once `sequence` is used up. */
  readonly fault?: FaultSpec;
  /** Faults for the next requests, in order ("503 twice, then OK"); set anew by configure. */
  readonly sequence?: ReadonlyArray<FaultSpec>;
  /** A repeated `Idempotency-Key` performs the effect again. */
  readonly ignoreIdempotencyKeys?: boolean;
  /** See ReceiptMode. */
  readonly receipt?: ReceiptMode;
}

/** Everything `configure()` can change. A field present in `next` replaces (undefined clears). */
export interface PlatformConfig {
  /** Required bearer token; requests without `Authorization: Bearer <token>` get 401. */
  readonly token?: string | null;
  /** Every request gets 401, token or not (authorization revoked). */
  readonly revokeToken?: boolean;
  /** Default fault of every endpoint. */
  readonly fault?: FaultSpec;
  /** Default of every effect endpoint. */
  readonly ignoreIdempotencyKeys?: boolean;
  /** Default receipt mode of posts and reviews. */
  readonly receipt?: ReceiptMode;
  /** Where receipts go when the request named no `callbackUrl`: a URL or a function. */
  readonly callback?: ReceiptCallback | null;
  /** Per-endpoint modes; merged field by field into the current ones. */
  readonly endpoints?: { readonly [E in Endpoint]?: EndpointMode };
}

/** What one request asked for in `X-Platform-Mode` or `?mode=`; it wins over configuration. */
export interface RequestMode {
  readonly fault?: Fault;
  readonly ignoreIdempotencyKeys?: boolean;
  readonly receipt?: ReceiptMode;
}

/** How one request is handled, configuration and request mode resolved. */
export interface RequestPlan {
  readonly fault: Fault;
  readonly ignoreIdempotencyKeys: boolean;
  readonly receipt: ReceiptMode | undefined;
}

export class ModeSyntaxError extends Error {
  override readonly name = 'ModeSyntaxError';
}

/** Holds the configuration and the scripted sequences, and plans each request. */
export class Modes {
  #initial: PlatformConfig;
  #config: PlatformConfig = {};
  readonly #sequences = new Map<Endpoint, Fault[]>();

  constructor(initial: PlatformConfig) {
    this.#initial = initial;
    this.reset();
  }

  get config(): PlatformConfig {
    return this.#config;
  }

  /**
   * Merges `next` into the configuration; a given `sequence` replaces the remaining one.
   * Throws (changing nothing) on an unknown endpoint or fault kind.
   */
  configure(next: PlatformConfig): void {
    const given = Object.entries(next.endpoints ?? {}) as [string, EndpointMode][];
    const sequences = new Map<Endpoint, Fault[]>();
    for (const [name, mode] of given) {
      if (!isEndpoint(name)) throw new TypeError(`configure: unknown endpoint "${name}"`);
      if (mode.fault !== undefined) toFault(mode.fault);
      if ('sequence' in mode) sequences.set(name, expandSequence(mode.sequence ?? []));
    }
    if (next.fault !== undefined) toFault(next.fault);

    const merged: { [E in Endpoint]?: EndpointMode } = { ...this.#config.endpoints };
    for (const [name, mode] of given as [Endpoint, EndpointMode][]) {
      merged[name] = { ...merged[name], ...mode };
    }
    for (const [name, sequence] of sequences) this.#sequences.set(name, sequence);
    this.#config = { ...this.#config, ...next, endpoints: merged };
  }

  /** Back to the options the platform started with, sequences included. */
  reset(): void {
    this.#config = {};
    this.#sequences.clear();
    this.configure(this.#initial);
  }

  /** Resolves a request's handling; consumes one sequence step unless the request names a fault. */
  plan(endpoint: Endpoint, request: RequestMode): RequestPlan {
    const endpointMode = this.#config.endpoints?.[endpoint] ?? {};
    const fault =
      request.fault ??
      this.#sequences.get(endpoint)?.shift() ??
      toFault(endpointMode.fault ?? this.#config.fault ?? 'ok');
    return {
      fault,
      ignoreIdempotencyKeys:
        request.ignoreIdempotencyKeys ??
        endpointMode.ignoreIdempotencyKeys ??
        this.#config.ignoreIdempotencyKeys ??
        false,
      receipt: request.receipt ?? endpointMode.receipt ?? this.#config.receipt,
    };
  }
}

/** Normalizes a fault spec; throws on an unknown kind. */
export function toFault(spec: FaultSpec): Fault {
  const fault = typeof spec === 'string' ? { kind: spec } : spec;
  if (!(faultKinds as ReadonlyArray<string>).includes(fault.kind)) {
    throw new TypeError(`unknown fault kind "${String(fault.kind)}"`);
  }
  return fault;
}

/** Expands `times` so that each array element is one request. */
export function expandSequence(specs: ReadonlyArray<FaultSpec>): Fault[] {
  return specs.flatMap((spec) => {
    const fault = toFault(spec);
    return Array.from({ length: fault.times ?? 1 }, () => fault);
  });
}

const faultAliases: Readonly<Record<string, FaultKind>> = {
  '401': 'unauthorized',
  '429': 'rate_limited',
  '503': 'unavailable',
  hang: 'timeout',
};

/**
 * Parses `X-Platform-Mode` / `?mode=`: comma-separated directives, each a name with
 * `;key=value` parameters. Names: a fault kind (or 401, 429, 503, hang) with `delay` (ms) and
 * `retry-after` (s); `ignore-idempotency`; `receipt` with `outcome`, `category`, `message`,
 * `delay`, `deliveries` and the flag `hold`. Dashes and underscores are interchangeable.
 * Example: `429;retry-after=3` or `receipt;outcome=rejected;category=invalid_argument`.
 */
export function parseModeDirectives(text: string): RequestMode {
  let mode: RequestMode = {};
  for (const directive of text.split(',')) {
    if (directive.trim() === '') continue;
    const [rawName = '', ...rawParams] = directive.split(';');
    const name = normalize(rawName);
    const params = parseParams(rawParams, directive);
    if (name === 'ignore_idempotency' || name === 'no_idempotency') {
      expectParams(params, [], directive);
      mode = { ...mode, ignoreIdempotencyKeys: true };
    } else if (name === 'receipt') {
      mode = { ...mode, receipt: receiptFromParams(params, directive) };
    } else {
      const kind = faultAliases[name] ?? faultKinds.find((known) => known === name);
      if (kind === undefined) throw new ModeSyntaxError(`unknown mode directive "${rawName}"`);
      mode = { ...mode, fault: faultFromParams(kind, params, directive) };
    }
  }
  return mode;
}

function normalize(text: string): string {
  return text.trim().toLowerCase().replaceAll('-', '_');
}

function parseParams(raw: ReadonlyArray<string>, directive: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const part of raw) {
    if (part.trim() === '') continue;
    const equals = part.indexOf('=');
    const key = normalize(equals === -1 ? part : part.slice(0, equals));
    const value = equals === -1 ? 'true' : part.slice(equals + 1).trim();
    if (params.has(key)) throw new ModeSyntaxError(`repeated "${key}" in "${directive.trim()}"`);
    params.set(key, value);
  }
  return params;
}

function expectParams(params: Map<string, string>, allowed: string[], directive: string): void {
  for (const key of params.keys()) {
    if (!allowed.includes(key)) {
      throw new ModeSyntaxError(`unknown parameter "${key}" in "${directive.trim()}"`);
    }
  }
}

function faultFromParams(kind: FaultKind, params: Map<string, string>, directive: string): Fault {
  expectParams(params, ['delay', 'retry_after'], directive);
  const delay = params.get('delay');
  const retryAfter = params.get('retry_after');
  return {
    kind,
    ...(delay === undefined ? {} : { delayMs: nonNegativeInteger(delay, directive) }),
    ...(retryAfter === undefined
      ? {}
      : { retryAfterSeconds: nonNegativeInteger(retryAfter, directive) }),
  };
}

function receiptFromParams(params: Map<string, string>, directive: string): ReceiptMode {
  expectParams(
    params,
    ['outcome', 'category', 'message', 'delay', 'hold', 'deliveries'],
    directive,
  );
  const outcome = params.get('outcome');
  if (outcome !== undefined && outcome !== 'ok' && outcome !== 'rejected') {
    throw new ModeSyntaxError(`receipt outcome must be ok or rejected in "${directive.trim()}"`);
  }
  const delay = params.get('delay');
  const deliveries = params.get('deliveries');
  const category = params.get('category');
  const message = params.get('message');
  return {
    ...(outcome === undefined ? {} : { outcome }),
    ...(category === undefined ? {} : { category }),
    ...(message === undefined ? {} : { message }),
    ...(delay === undefined ? {} : { delayMs: nonNegativeInteger(delay, directive) }),
    ...(params.get('hold') === 'true' ? { hold: true } : {}),
    ...(deliveries === undefined ? {} : { deliveries: nonNegativeInteger(deliveries, directive) }),
  };
}

function nonNegativeInteger(text: string, directive: string): number {
  if (!/^\d+$/.test(text)) {
    throw new ModeSyntaxError(`expected a non-negative integer, got "${text}" in "${directive}"`);
  }
  return Number(text);
}
