import {
  attemptOutcomes,
  blockerCodes,
  errorCategories,
  reasonCodes,
  taskStates,
  workflowStates,
} from '@causeway/workflow';

/** The schema's enums that are the domain's closed sets, in UPPER_SNAKE (docs/rules.md). */
export const domainEnums: Readonly<Record<string, readonly string[]>> = Object.freeze({
  TaskState: taskStates,
  WorkflowState: workflowStates,
  ReasonCode: reasonCodes,
  ErrorCategory: errorCategories,
  BlockerCode: blockerCodes,
  AttemptOutcome: attemptOutcomes,
});

/**
 * schema.graphql with the values of each domain enum written from the code, everything else
 * (descriptions included) kept as it is: a new state or reason code reaches the API by
 * `pnpm generate`, never by hand.
 */
export function renderSchemaWithDomainEnums(schema: string): string {
  let text = schema;
  for (const [name, values] of Object.entries(domainEnums)) {
    const block = new RegExp(`^enum ${name} \\{\\n[^}]*\\}`, 'm');
    if (!block.test(text)) throw new Error(`schema.graphql has no enum ${name}`);
    const body = values.map((value) => `  ${value.toUpperCase()}`).join('\n');
    text = text.replace(block, `enum ${name} {\n${body}\n}`);
  }
  return text;
}
