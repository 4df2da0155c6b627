import { isOneStepChild } from './one-step-child';
import type { MapSpec, WorkflowDefinition, WorkflowStep } from './workflow-definition';

/**
 * The step graph as a Mermaid flowchart (roots first, one line per dependency); a map step is a
 * subroutine node labelled with the child workflow it maps over.
 */
export function workflowMermaid(definition: WorkflowDefinition): string {
  const lines = ['flowchart LR'];
  for (const step of definition.steps) {
    if (step.map !== undefined) lines.push(`  ${step.name}[["${mapLabel(step, step.map)}"]]`);
    else if (step.after.length === 0) lines.push(`  ${step.name}`);
    for (const upstream of step.after) lines.push(`  ${upstream} --> ${step.name}`);
  }
  return lines.join('\n');
}

/** A readable outline of a definition: each step with its dependencies and retry policy. */
export function describeWorkflow(definition: WorkflowDefinition): string {
  const lines = [
    `${definition.name}: ${definition.steps.length} step${definition.steps.length === 1 ? '' : 's'}` +
      (definition.deadlineMs === null ? '' : `, total budget ${duration(definition.deadlineMs)}`),
  ];
  for (const step of definition.steps) {
    const after = step.after.length === 0 ? 'runs first' : `after ${step.after.join(', ')}`;
    const text = step.map === undefined ? policyText(step) : mapText(step.map);
    const name = step.map === undefined ? step.name : mapLabel(step, step.map);
    lines.push(`  ${name.padEnd(12)} ${after}; ${text}`);
  }
  return lines.join('\n');
}

/** A map step as what it maps over: `publish-each ⇉ publish-to-platform`. */
function mapLabel(step: WorkflowStep, map: MapSpec): string {
  return `${step.name} ⇉ ${map.workflow.name}`;
}

/** What a map step starts and accepts; a one-step child's step policy too (R44, R45). */
function mapText(map: MapSpec): string {
  const { tolerate } = map;
  const bounds = [
    ...(tolerate?.failures === undefined ? [] : [`${tolerate.failures}`]),
    ...(tolerate?.percent === undefined ? [] : [`${tolerate.percent}%`]),
  ];
  const [childStep] = map.workflow.steps;
  const oneStep =
    childStep !== undefined && isOneStepChild(map.workflow)
      ? [`each child one step: ${policyText(childStep)}`]
      : [];
  return [
    'one child workflow per element',
    bounds.length === 0 ? 'fail fast' : `tolerates ${bounds.join(' and ')} failed`,
    `at most ${map.maxChildren} children`,
    ...oneStep,
  ].join(', ');
}

function policyText(step: WorkflowStep): string {
  const { policy } = step;
  const backoff = policy.backoff;
  return [
    `queue ${step.queue}`,
    policy.reentrant ? 'reentrant' : 'not reentrant',
    `${policy.maxAttempts} attempt${policy.maxAttempts === 1 ? '' : 's'}`,
    `backoff ${duration(backoff.initialIntervalMs)} ×${backoff.backoffCoefficient} ≤ ${duration(backoff.maximumIntervalMs)} (full jitter)`,
    `timeout ${duration(policy.timeoutMs)}`,
    ...(policy.deadlineMs === null
      ? []
      : [`deadline ${duration(policy.deadlineMs)} after acceptance`]),
  ].join(', ');
}

function duration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1_000 === 0 && ms > 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}
