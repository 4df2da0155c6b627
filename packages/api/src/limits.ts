import {
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLNamedType,
  getNamedType,
  isInterfaceType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

/** Limits applied at validation time, before any resolver or SQL runs. */
export interface QueryLimits {
  /** Deepest field nesting (`workflows { edges { node { id } } }` is 4). Default 12. */
  readonly maxDepth: number;
  /** Aliased fields per operation. Default 20. */
  readonly maxAliases: number;
  /**
   * Estimated cost: one per field (more for the fields in `fieldCosts`), times the list sizes
   * above it. Default 100,000.
   */
  readonly maxCost: number;
  /** Lexical tokens per document. Default 3,000. */
  readonly maxTokens: number;
  /** Largest `first` of a connection (page size). Default 100. */
  readonly maxPageSize: number;
  /** `first` when a query gives none. Default 20. */
  readonly defaultPageSize: number;
}

export const defaultQueryLimits: QueryLimits = Object.freeze({
  maxDepth: 12,
  maxAliases: 20,
  maxCost: 100_000,
  maxTokens: 3_000,
  maxPageSize: 100,
  defaultPageSize: 20,
});

/**
 * Expected sizes of list fields for the cost estimate (a workflow has a handful of steps and a
 * few dozen log rows). Connections use their `first` argument (capped at the page size).
 */
const listSizes: Readonly<Record<string, number>> = {
  'Workflow.tasks': 10,
  'Workflow.transitions': 50,
  'Task.transitions': 10,
  'Task.attempts': 5,
  'Query.definitions': 10,
  'WorkflowDefinition.steps': 10,
  'WorkflowDefinition.edges': 10,
  'WorkflowDefinition.workers': 5,
  'StepDefinition.after': 5,
  'RequeueDeadPayload.results': 100,
  'SendEventPayload.tasks': 10,
  'Query.schedules': 20,
  'Schedule.history': 20,
  'Workflow.blockers': 10,
  'Query.workers': 20,
  'Worker.queues': 5,
  'Worker.workflows': 10,
  'WorkerWorkflow.steps': 10,
  'Workflow.childCounts': 10,
  'StepChildCounts.workflows': 2,
  'StepChildCounts.byState': 7,
};

/** Fields that answer a `WorkflowConnection`: their `edges` are a list of `first` workflows. */
const connectionFields: ReadonlySet<string> = new Set(['Query.workflows', 'Workflow.children']);

/**
 * Fields that read more than their own row, at what they read. `totalCount` counts every
 * matching workflow (up to the count's bound, ten thousand rows) where a page reads at most
 * `maxPageSize`: priced at one per row it may count, twenty aliased counts are refused before
 * anything runs, and a reader without a token cannot make one request scan the table many
 * times over. `totalCountCapped` runs the same count when it is asked for alone.
 */
export const fieldCosts: Readonly<Record<string, number>> = {
  'WorkflowConnection.totalCount': 10_000,
  // The same count (one per connection, shared with `totalCount`), asked for alone.
  'WorkflowConnection.totalCountCapped': 10_000,
};

function tooComplex(
  limit: 'depth' | 'aliases' | 'cost',
  actual: number,
  max: number,
  node: OperationDefinitionNode,
): GraphQLError {
  const what = { depth: 'nesting depth', aliases: 'aliases', cost: 'estimated cost' }[limit];
  return new GraphQLError(`The operation's ${what} is ${actual}, over the limit of ${max}.`, {
    nodes: [node],
    extensions: { code: 'QUERY_TOO_COMPLEX', limit, max, actual },
  });
}

/** One validation rule measuring depth, aliases and cost of each operation (fragments included). */
export function queryLimitsRule(limits: QueryLimits): ValidationRule {
  return (context: ValidationContext) => ({
    OperationDefinition(operation) {
      const schema = context.getSchema();
      const root =
        operation.operation === 'query'
          ? schema.getQueryType()
          : operation.operation === 'mutation'
            ? schema.getMutationType()
            : schema.getSubscriptionType();
      const fragments = new Map<string, FragmentDefinitionNode>();
      for (const definition of context.getDocument().definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION) {
          fragments.set(definition.name.value, definition);
        }
      }
      let maxDepth = 0;
      let aliases = 0;
      // Stops walking once a limit is exceeded: a hostile document must not cost us much.
      let budget = 100_000;
      const walk = (
        selectionSet: SelectionSetNode,
        parent: GraphQLNamedType | null | undefined,
        depth: number,
        multiplier: number,
        visiting: ReadonlySet<string>,
        pageSize: number,
      ): number => {
        let cost = 0;
        for (const selection of selectionSet.selections) {
          budget -= 1;
          if (budget < 0 || depth > limits.maxDepth) return cost;
          if (selection.kind === Kind.FIELD) {
            if (selection.alias !== undefined) aliases += 1;
            const fieldDepth = depth + 1;
            if (fieldDepth > maxDepth) maxDepth = fieldDepth;
            cost += multiplier * (fieldCosts[`${parent?.name}.${selection.name.value}`] ?? 1);
            const fields =
              parent !== null &&
              parent !== undefined &&
              (isObjectType(parent) || isInterfaceType(parent))
                ? parent.getFields()
                : undefined;
            const field = fields?.[selection.name.value];
            if (selection.selectionSet !== undefined) {
              const connection = connectionFields.has(`${parent?.name}.${selection.name.value}`);
              // A connection is one object; its `edges` are the list, of the page's size.
              const size =
                parent?.name === 'WorkflowConnection' && selection.name.value === 'edges'
                  ? pageSize
                  : listSize(parent?.name, selection.name.value);
              cost += walk(
                selection.selectionSet,
                field === undefined ? undefined : getNamedType(field.type),
                fieldDepth,
                multiplier * size,
                visiting,
                connection ? connectionPageSize(selection, limits) : pageSize,
              );
            }
          } else if (selection.kind === Kind.INLINE_FRAGMENT) {
            const typed =
              selection.typeCondition === undefined
                ? parent
                : schema.getType(selection.typeCondition.name.value);
            cost += walk(selection.selectionSet, typed, depth, multiplier, visiting, pageSize);
          } else {
            const name = selection.name.value;
            const fragment = fragments.get(name);
            if (fragment === undefined || visiting.has(name)) continue;
            cost += walk(
              fragment.selectionSet,
              schema.getType(fragment.typeCondition.name.value),
              depth,
              multiplier,
              new Set([...visiting, name]),
              pageSize,
            );
          }
        }
        return cost;
      };
      const cost = walk(operation.selectionSet, root, 0, 1, new Set(), 1);
      if (maxDepth > limits.maxDepth) {
        context.reportError(tooComplex('depth', maxDepth, limits.maxDepth, operation));
      } else if (aliases > limits.maxAliases) {
        context.reportError(tooComplex('aliases', aliases, limits.maxAliases, operation));
      } else if (cost > limits.maxCost || budget < 0) {
        context.reportError(tooComplex('cost', cost, limits.maxCost, operation));
      }
    },
  });
}

/** The page size a connection asks for (`first`; a variable counts as the largest). */
function connectionPageSize(
  selection: { arguments?: readonly { name: { value: string }; value: { kind: string } }[] },
  limits: QueryLimits,
): number {
  const first = selection.arguments?.find((argument) => argument.name.value === 'first')?.value;
  const size =
    first === undefined
      ? limits.defaultPageSize
      : first.kind === Kind.INT
        ? Number((first as unknown as { value: string }).value)
        : limits.maxPageSize;
  // Page size errors are reported by the resolver (BAD_USER_INPUT); the estimate caps it.
  return Math.max(1, Math.min(size, limits.maxPageSize));
}

function listSize(parentName: string | undefined, fieldName: string): number {
  return listSizes[`${parentName}.${fieldName}`] ?? 1;
}
