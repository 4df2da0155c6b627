/**
 * Who may take an edge (the actors column of the edge table, docs/state-machine.md). A
 * transition's actor string is `<kind>` or `<kind>:<name>` — `worker:<holder>`,
 * `operator:<name>`, `sweeper:<holder>`, `client`, `schedule:<name>`.
 */
export const actorKinds = [
  'client',
  'operator',
  'system',
  'worker',
  'sweeper',
  'outbox',
  'receipt',
  'schedule',
  /** A parent step (`parent:<task id>`): it submits its children and cancels them (R43, R45). */
  'parent',
] as const;
export type ActorKind = (typeof actorKinds)[number];

export interface Actor {
  readonly kind: ActorKind;
  /** Holder for workers and sweepers, operator name for operators; absent for client and system. */
  readonly name?: string;
}

export function formatActor(actor: Actor): string {
  return actor.name === undefined ? actor.kind : `${actor.kind}:${actor.name}`;
}

export function parseActor(text: string): Actor {
  const separator = text.indexOf(':');
  const kind = separator === -1 ? text : text.slice(0, separator);
  if (!(actorKinds as readonly string[]).includes(kind)) {
    throw new Error(`unknown actor kind in ${JSON.stringify(text)}`);
  }
  return separator === -1
    ? { kind: kind as ActorKind }
    : { kind: kind as ActorKind, name: text.slice(separator + 1) };
}
