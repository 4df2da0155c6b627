import {
  type RateLimit,
  versionKey,
  type WorkflowDefinition,
  type WorkflowRegistry,
  workflowVersion,
} from '@causeway/workflow/internal';
import type { RateLimitPlan } from '../db/claim/rate-claim';

/**
 * The engine's workflow steps as parallel arrays, the shape the one-statement claim and settle
 * take as parameters: one entry per (workflow, version, step), built once per registry.
 */
export interface StepTable {
  /** The names it defines (some version of). */
  readonly definedNames: readonly string[];
  readonly stepNames: readonly string[];
  /** The version of the entry's definition (R54). */
  readonly stepVersions: readonly string[];
  /** The latest version of the entry's name: the one a workflow stored without a version takes. */
  readonly stepLatest: readonly string[];
  readonly stepSteps: readonly string[];
  /**
   * What a claim, sweep or send may take (`definedWorkflowStep`): `workflow@version` of every
   * version this engine defines, and `workflow/step` of every step of each name's latest
   * version, for workflows stored without a version (names are lowercase letters, digits, `_`,
   * `-` and a map child's `/`, never `@`, so the two kinds never meet).
   */
  readonly stepKeys: readonly string[];
  /** JSON array of the steps it runs after directly (what promotion checks). */
  readonly stepAfter: readonly string[];
  /** JSON array of the steps it runs after, directly or not (whose outputs it reads). */
  readonly stepUpstream: readonly string[];
  /** Its index in the definition (the order the machine logs promotions in). */
  readonly stepOrder: readonly number[];
  /** Queues with a step that has a concurrency key (R50): only their claims look for keys. */
  readonly keyedQueues: ReadonlySet<string>;
  /** Queues with a step that spends a rate limit (R51): only their claims read the windows. */
  readonly ratedQueues: ReadonlySet<string>;
}

const tables = new WeakMap<WorkflowRegistry, StepTable>();

export function stepTableOf(definitions: WorkflowRegistry): StepTable {
  let table = tables.get(definitions);
  if (table === undefined) {
    const steps = definitions.versions.flatMap((definition) =>
      definition.steps.map((step, order) => ({ definition, step, order })),
    );
    const latestVersion = (name: string) => {
      const latest = definitions.get(name);
      return latest === undefined ? '' : workflowVersion(latest);
    };
    table = {
      definedNames: [...definitions.keys()],
      stepNames: steps.map((entry) => entry.definition.name),
      stepVersions: steps.map((entry) => workflowVersion(entry.definition)),
      stepLatest: steps.map((entry) => latestVersion(entry.definition.name)),
      stepSteps: steps.map((entry) => entry.step.name),
      stepKeys: [
        ...definitions.versions.map((definition) =>
          versionKey(definition.name, workflowVersion(definition)),
        ),
        ...[...definitions.values()].flatMap((definition) =>
          definition.steps.map((step) => `${definition.name}/${step.name}`),
        ),
      ],
      stepAfter: steps.map((entry) => JSON.stringify(entry.step.after)),
      stepUpstream: steps.map((entry) =>
        JSON.stringify([...upstreamSteps(entry.definition, entry.step.name)]),
      ),
      stepOrder: steps.map((entry) => entry.order),
      keyedQueues: new Set(
        steps.flatMap(({ step }) => [
          ...(step.concurrency === undefined ? [] : [step.queue]),
          // A map step's concurrency keys every step of its children (R44).
          ...((step.map?.concurrency ?? null) === null
            ? []
            : (step.map?.workflow.steps.map((child) => child.queue) ?? [])),
        ]),
      ),
      ratedQueues: new Set(
        steps.flatMap(({ step }) => (step.rateLimit === undefined ? [] : [step.queue])),
      ),
    };
    tables.set(definitions, table);
  }
  return table;
}

const stepsTexts = new WeakMap<WorkflowDefinition, string>();

/** A definition's step names, comma-separated in definition order: a workflow row's `steps`. */
export function workflowStepsText(definition: WorkflowDefinition): string {
  let text = stepsTexts.get(definition);
  if (text === undefined) {
    text = definition.steps.map((step) => step.name).join(',');
    stepsTexts.set(definition, text);
  }
  return text;
}

const upstreamOf = new WeakMap<WorkflowDefinition, Map<string, ReadonlySet<string>>>();

/** The steps a step runs after, directly or through others; computed once per step. */
export function upstreamSteps(definition: WorkflowDefinition, name: string): ReadonlySet<string> {
  let byStep = upstreamOf.get(definition);
  if (byStep === undefined) {
    byStep = new Map();
    upstreamOf.set(definition, byStep);
  }
  let found = byStep.get(name);
  if (found === undefined) {
    found = collectUpstream(definition, name);
    byStep.set(name, found);
  }
  return found;
}

function collectUpstream(definition: WorkflowDefinition, name: string): Set<string> {
  const found = new Set<string>();
  const visit = (stepName: string) => {
    const step = definition.steps.find((candidate) => candidate.name === stepName);
    for (const upstream of step?.after ?? []) {
      if (found.has(upstream)) continue;
      found.add(upstream);
      visit(upstream);
    }
  };
  visit(name);
  return found;
}

const downstream = new WeakMap<WorkflowDefinition, Map<string, readonly string[]>>();

/**
 * The queues of the steps that run directly after a step: where its success may have made
 * work ready. Built once per definition.
 */
export function downstreamQueues(definition: WorkflowDefinition, name: string): readonly string[] {
  let byStep = downstream.get(definition);
  if (byStep === undefined) {
    byStep = new Map();
    for (const step of definition.steps) {
      const queues = new Set<string>();
      for (const next of definition.steps)
        if (next.after.includes(step.name)) queues.add(next.queue);
      byStep.set(step.name, [...queues]);
    }
    downstream.set(definition, byStep);
  }
  return byStep.get(name) ?? [];
}

const decidedDownstream = new WeakMap<WorkflowDefinition, ReadonlySet<string>>();

/**
 * Whether a step's success may make ready a step that only the full decision promotes: one
 * with a delay (its run_at and edge detail, R36) or an event step (its key, timeout and the
 * events stored before it waits, R37) or a map step (its list and children, R44). Built once
 * per definition.
 */
export function promotesStepDecidedInFull(definition: WorkflowDefinition, name: string): boolean {
  let steps = decidedDownstream.get(definition);
  if (steps === undefined) {
    steps = new Set(
      definition.steps
        .filter(
          (step) => step.policy.delayMs !== null || step.policy.wait !== null || step.policy.map,
        )
        .flatMap((step) => step.after),
    );
    decidedDownstream.set(definition, steps);
  }
  return steps.has(name);
}

const noRateLimits: RateLimitPlan = Object.freeze({ names: [], limits: [], periodsMs: [] });
const ratePlans = new WeakMap<readonly RateLimit[], RateLimitPlan>();

/** The engine's rate limits (R51) as the claim takes them, built once per set. */
export function rateLimitPlanOf(limits: readonly RateLimit[] | undefined): RateLimitPlan {
  if (limits === undefined || limits.length === 0) return noRateLimits;
  let plan = ratePlans.get(limits);
  if (plan === undefined) {
    plan = {
      names: limits.map((limit) => limit.name),
      limits: limits.map((limit) => limit.limit),
      periodsMs: limits.map((limit) => limit.periodMs),
    };
    ratePlans.set(limits, plan);
  }
  return plan;
}
