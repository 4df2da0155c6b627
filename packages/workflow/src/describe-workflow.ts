import type { WorkflowDefinition, WorkflowStep } from './define-workflow';

/** The step graph as a Mermaid flowchart (roots first, one line per dependency). */
export function workflowMermaid(definition: WorkflowDefinition): string {
  const lines = ['flowchart LR'];
  for (const step of definition.steps) {
    if (step.after.length === 0) lines.push(`  ${step.name}`);
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
    lines.push(`  ${step.name.padEnd(12)} ${after}; ${policyText(step)}`);
  }
  return lines.join('\n');
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
