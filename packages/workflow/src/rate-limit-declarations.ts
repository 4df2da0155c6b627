/**
 * The engine's side of rate limits (R51): declaring one, and checking an engine's limits
 * against the steps that name them. Apart from `rate-limit.ts` because it reads whole
 * workflow definitions, whose steps in turn hold a `StepRateLimit`.
 */
import { DefinitionError } from './define-workflow';
import { type RateLimit, rateLimitFieldProblems } from './rate-limit';
import type { WorkflowDefinition } from './workflow-definition';

/**
 * Declares a rate limit for `createEngine({ rateLimits })`: validated and frozen, or a
 * `DefinitionError` listing every field that is wrong.
 */
export function rateLimit(options: RateLimit): RateLimit {
  const problems = rateLimitFieldProblems(options);
  if (problems.length > 0) throw new DefinitionError('invalid rate limit', problems);
  return Object.freeze({ name: options.name, limit: options.limit, periodMs: options.periodMs });
}

/**
 * Every problem of an engine's rate limits against its workflow definitions: a name declared
 * twice, a limit's own fields, a step (of a workflow or of a map step's child workflow) that
 * names a limit the engine does not declare, and a step whose cost exceeds its limit's
 * `limit`, whose tasks could therefore never be claimed. Each names the workflow and step.
 */
export function rateLimitDeclarationProblems(
  limits: readonly RateLimit[],
  definitions: readonly WorkflowDefinition[],
): string[] {
  const problems: string[] = [];
  const declared = new Map<string, RateLimit>();
  const repeated = new Set<string>();
  for (const [index, limit] of limits.entries()) {
    const name: unknown = (limit as Partial<RateLimit> | null)?.name;
    const subject = typeof name === 'string' ? `rate limit "${name}"` : `rate limit #${index}`;
    problems.push(...rateLimitFieldProblems(limit).map((problem) => `${subject}: ${problem}`));
    if (typeof name !== 'string') continue;
    if (declared.has(name)) repeated.add(name);
    else declared.set(name, limit);
  }
  problems.push(...[...repeated].map((name) => `two rate limits are named "${name}"`));
  for (const { definition, via } of withMapChildren(definitions)) {
    for (const step of definition.steps) {
      const option = step.rateLimit;
      if (option === undefined) continue;
      const subject = `workflow "${definition.name}" step "${step.name}"${via}`;
      const limit = declared.get(option.name);
      if (limit === undefined) {
        problems.push(`${subject} names rate limit "${option.name}", which is not declared`);
        continue;
      }
      const cost = option.cost ?? 1;
      if (typeof limit.limit === 'number' && cost > limit.limit) {
        problems.push(
          `${subject} costs ${cost} of rate limit "${option.name}", over its limit of ${limit.limit}: its tasks could never be claimed`,
        );
      }
    }
  }
  return problems;
}

/**
 * The definitions and, depth first, the child workflows their map steps start, each once
 * (a child may also be registered itself, or mapped by several steps). `via` says which map
 * step reached a child, for the messages.
 */
function withMapChildren(
  definitions: readonly WorkflowDefinition[],
): { readonly definition: WorkflowDefinition; readonly via: string }[] {
  const seen = new Set<WorkflowDefinition>();
  const found: { readonly definition: WorkflowDefinition; readonly via: string }[] = [];
  const visit = (definition: WorkflowDefinition, via: string): void => {
    if (seen.has(definition)) return;
    seen.add(definition);
    found.push({ definition, via });
    for (const step of definition.steps) {
      const child = step.map?.workflow;
      if (child !== undefined) {
        visit(child, ` (child of map step "${step.name}" of workflow "${definition.name}")`);
      }
    }
  };
  for (const definition of definitions) visit(definition, '');
  return found;
}
