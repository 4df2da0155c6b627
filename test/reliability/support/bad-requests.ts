/**
 * fast-check arbitraries of bad GraphQL requests (issue 19 §1): random JSON and text bodies,
 * huge strings, deep nesting, wrong types, unknown fields, bad variables, unknown workflow and
 * event names, oversized payloads, NUL strings; and bad submit / sendEvent arguments for the
 * engine's API. None may get a 5xx or an error without a stable code.
 */
import fc from 'fast-check';

export interface BadRequest {
  readonly kind: string;
  readonly method: 'GET' | 'POST';
  /** The raw body (POST) or the query string (GET). */
  readonly body: string;
  readonly contentType: string;
  readonly token: boolean;
}

/** Keys the load uses (`w-<n>`) are left to the load: a fuzzed event must not complete them. */
const fuzzKey = fc
  .oneof(
    fc.string({ maxLength: 300 }),
    fc.constant(''),
    fc.string({ unit: 'binary', maxLength: 50 }).map((text) => `k\u0000${text}`),
    fc.constant('x'.repeat(10_000)),
  )
  .filter((key) => !/^w-\d+$/.test(key));

const nulString = fc.string({ maxLength: 20 }).map((text) => `${text}\u0000${text}`);
const deepArray = fc.integer({ min: 50, max: 3_000 }).map((depth) => {
  let value: unknown = 1;
  for (let level = 0; level < depth; level += 1) value = [value];
  return value;
});
/** JSON values a client may send: plain, NUL-bearing, deep, huge. */
const jsonValue = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 1, arbitrary: nulString },
  { weight: 1, arbitrary: deepArray },
  { weight: 1, arbitrary: fc.constant({ blob: 'y'.repeat(300_000) }) },
  { weight: 1, arbitrary: fc.record({ n: fc.string(), effect: fc.jsonValue() }) },
);
const workflowName = fc.oneof(
  fc.constantFrom('rel-one', 'rel-three', 'rel-wait', 'no-such-workflow', ''),
  fc.string({ maxLength: 200 }),
  nulString,
);
const eventName = fc.oneof(
  fc.constantFrom('rel.go', 'no.such.event', 'Upper.Case', ''),
  fc.string({ maxLength: 200 }),
  nulString,
);

const post = (kind: string, document: unknown, token = true): BadRequest => ({
  kind,
  method: 'POST',
  body: JSON.stringify(document),
  contentType: 'application/json',
  token,
});

const submitDocument = `mutation($name: String!, $input: JSON!, $key: String) {
  submitWorkflow(name: $name, input: $input, idempotencyKey: $key) { workflow { id state } }
}`;
const sendDocument = `mutation($name: String!, $key: String!, $payload: JSON!, $reason: String) {
  sendEvent(name: $name, key: $key, payload: $payload, reason: $reason) { eventId deduplicated }
}`;

const nested = (depth: number) => {
  let selection = 'id';
  for (let level = 0; level < depth; level += 1) {
    selection = level % 2 === 0 ? `workflow { ${selection} }` : `tasks { ${selection} }`;
  }
  return `query($id: ID!) { workflow(id: $id) { ${selection} } }`;
};

export const badRequest: fc.Arbitrary<BadRequest> = fc.oneof(
  fc.jsonValue().map((value) => post('random JSON body', value)),
  fc.string({ unit: 'binary', maxLength: 2_000 }).map((text) => ({
    ...post('random text body', null),
    body: text,
  })),
  fc.string({ maxLength: 500 }).map((text) => post('random document', { query: text })),
  fc
    .record({ name: workflowName, input: jsonValue, key: fc.option(fuzzKey), token: fc.boolean() })
    .map(({ name, input, key, token }) =>
      post('submitWorkflow', { query: submitDocument, variables: { name, input, key } }, token),
    ),
  fc
    .record({ name: eventName, key: fuzzKey, payload: jsonValue, reason: fc.option(fc.string()) })
    .map(({ name, key, payload, reason }) =>
      post('sendEvent', { query: sendDocument, variables: { name, key, payload, reason } }),
    ),
  fc
    .record({ name: fc.jsonValue(), input: fc.jsonValue(), key: fc.jsonValue() })
    .map((variables) => post('wrong variable types', { query: submitDocument, variables })),
  fc
    .oneof(fc.string(), fc.array(fc.integer()), fc.integer(), fc.constant(null))
    .map((variables) => post('variables not an object', { query: submitDocument, variables })),
  fc
    .stringMatching(/^[a-z][a-zA-Z0-9_]{0,30}$/)
    .map((field) => post('unknown field', { query: `{ ${field}Unknown { id } }` })),
  fc
    .integer({ min: 10, max: 400 })
    .map((depth) =>
      post('deep selection', { query: nested(depth), variables: { id: crypto.randomUUID() } }),
    ),
  fc
    .integer({ min: 1_100_000, max: 1_500_000 })
    .map((size) =>
      post('oversized body', { query: `{ definitions { name } }`, pad: 'z'.repeat(size) }),
    ),
  fc.string({ maxLength: 300 }).map((text) => ({
    ...post('GET with a random query', null),
    method: 'GET' as const,
    body: text,
  })),
  fc
    .constantFrom(
      'workflow(id: "not-a-uuid") { id }',
      'workflows(first: -5) { totalCount }',
      'workflows(after: "!!") { totalCount }',
    )
    .map((selection) => post('bad arguments', { query: `{ ${selection} }` })),
);

/** Engine API calls with bad arguments: a submit or an event send (one or a batch). */
export type BadEngineCall =
  | {
      readonly kind: 'submit';
      readonly name: string;
      readonly input: unknown;
      readonly key: string | null;
    }
  | {
      readonly kind: 'sendEvent';
      readonly name: string;
      readonly key: string;
      readonly payload: unknown;
    };

export const badEngineCall: fc.Arbitrary<BadEngineCall> = fc.oneof(
  fc
    .record({ name: workflowName, input: jsonValue, key: fc.option(fuzzKey) })
    .map((call) => ({ kind: 'submit' as const, ...call })),
  fc
    .record({ name: eventName, key: fuzzKey, payload: jsonValue })
    .map((call) => ({ kind: 'sendEvent' as const, ...call })),
);
