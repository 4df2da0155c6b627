import {
  nonTerminalTaskStates,
  type TaskState,
  taskStates,
  terminalTaskStates,
  type WorkflowState,
} from './machine-table';

/**
 * A condition on the set of states a workflow's children are in: `some` child is in one of
 * the states, `every` child is in one of them, or `no` child is in any of them.
 */
export type ChildCondition =
  | { readonly some: readonly TaskState[] }
  | { readonly every: readonly TaskState[] }
  | { readonly no: readonly TaskState[] };

/** One row of the aggregation table: the parent is `state` when all its conditions hold. */
export interface AggregationRule {
  readonly state: WorkflowState;
  readonly when: readonly ChildCondition[];
}

/**
 * The parent's state as a function of its children's states, as data: rows are evaluated top
 * to bottom and the first whose conditions all hold gives the state; the last row has none.
 * Only which states are present counts, never how many children are in each.
 */
export const aggregationRules: readonly AggregationRule[] = Object.freeze([
  { state: 'dead', when: [{ some: ['dead'] }] },
  { state: 'succeeded', when: [{ every: ['succeeded'] }] },
  { state: 'cancelled', when: [{ every: terminalTaskStates }, { some: ['cancelled'] }] },
  { state: 'cancel_requested', when: [{ some: ['cancel_requested'] }] },
  // Only the outside world can move it: an event, a timeout, an operator.
  {
    state: 'waiting',
    when: [
      { some: ['waiting'] },
      { no: ['leased', 'awaiting_receipt', 'awaiting_children', 'queued'] },
    ],
  },
  { state: 'running', when: [{ some: ['leased', 'awaiting_receipt', 'awaiting_children'] }] },
  { state: 'running', when: [{ some: ['succeeded'] }, { some: nonTerminalTaskStates }] },
  { state: 'queued', when: [] },
] satisfies AggregationRule[]);

const bitOf = new Map<TaskState, number>(taskStates.map((state, index) => [state, 1 << index]));
const maskOf = (states: readonly TaskState[]) =>
  states.reduce((mask, state) => mask | (bitOf.get(state) as number), 0);

/** The rows as bit masks over `taskStates`, evaluated once per child set. */
const compiledRules = aggregationRules.map((rule) => ({
  state: rule.state,
  when: rule.when.map((condition) =>
    'some' in condition
      ? { kind: 'some' as const, mask: maskOf(condition.some) }
      : 'every' in condition
        ? { kind: 'every' as const, mask: maskOf(condition.every) }
        : { kind: 'no' as const, mask: maskOf(condition.no) },
  ),
}));

/** The parent's state for a set of present child states (bit i: some child is `taskStates[i]`). */
export function aggregateByPresence(present: number): WorkflowState {
  for (const rule of compiledRules) {
    let holds = true;
    for (const condition of rule.when) {
      const overlap = present & condition.mask;
      if (
        condition.kind === 'some'
          ? overlap === 0
          : condition.kind === 'every'
            ? overlap !== present
            : overlap !== 0
      ) {
        holds = false;
        break;
      }
    }
    if (holds) return rule.state;
  }
  throw new Error('the aggregation table must end with a row without conditions');
}

/**
 * The parent's state as one pure fold over its children's states (`aggregationRules`). A
 * workflow has at least one step, so `children` is never empty.
 */
export function aggregateWorkflowState(children: readonly TaskState[]): WorkflowState {
  if (children.length === 0) throw new RangeError('a workflow has at least one task');
  let present = 0;
  for (const state of children) present |= bitOf.get(state) as number;
  return aggregateByPresence(present);
}

/** A row's conditions in words, for the generated docs. */
export function describeAggregationRule(rule: AggregationRule): string {
  if (rule.when.length === 0) return 'otherwise';
  const list = (states: readonly TaskState[]) => {
    const names = states.map((state) => `\`${state}\``);
    return names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  };
  return rule.when
    .map((condition) =>
      'some' in condition
        ? `some child is ${list(condition.some)}`
        : 'every' in condition
          ? `every child is ${list(condition.every)}`
          : `no child is ${list(condition.no)}`,
    )
    .join(', and ');
}
