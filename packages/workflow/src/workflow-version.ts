import { sha256Hex } from './sha256';
import type { WorkflowDefinition, WorkflowStep } from './workflow-definition';

/** The longest `version` a definition may declare (R54). */
export const maxVersionLength = 64;

/** Hex digits of the shape digest a definition without `version` records. */
const digestLength = 12;

/** What is wrong with a declared `version`: empty, too long, not a string, or control characters. */
export function versionProblems(version: unknown): string[] {
  if (typeof version !== 'string') return [`version must be a string (got ${typeof version})`];
  if (version.length === 0) return ['version must not be empty'];
  if (version.length > maxVersionLength) {
    return [`version must be at most ${maxVersionLength} characters (got ${version.length})`];
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: they are what is refused.
  if (/[\u0000-\u001f\u007f]/.test(version)) return ['version must not hold control characters'];
  return [];
}

/** How a step runs, as the digest records it. */
function stepKind(step: Pick<WorkflowStep, 'event' | 'map'>): 'event' | 'map' | 'run' {
  if (step.event !== undefined) return 'event';
  if (step.map !== undefined) return 'map';
  return 'run';
}

/**
 * The digest of a definition's shape (R54): its steps in definition order with their kind,
 * `after` and queue, as canonical JSON (arrays and fixed keys only), hashed with SHA-256 and
 * cut to 12 hex digits. The same shape gives the same digest in any process; code inside a
 * `run` does not count.
 */
export function shapeDigest(definition: {
  readonly steps: readonly Pick<WorkflowStep, 'name' | 'event' | 'map' | 'after' | 'queue'>[];
}): string {
  const shape = definition.steps.map((step) => [
    step.name,
    stepKind(step),
    [...step.after],
    step.queue,
  ]);
  return sha256Hex(JSON.stringify(shape)).slice(0, digestLength);
}

const versions = new WeakMap<WorkflowDefinition, string>();

/** The version a workflow of `definition` records: its declared `version`, else its digest. */
export function workflowVersion(definition: WorkflowDefinition): string {
  let version = versions.get(definition);
  if (version === undefined) {
    version = definition.version ?? shapeDigest(definition);
    versions.set(definition, version);
  }
  return version;
}

/**
 * `name@version`: one version of one workflow, as the engine's claim and registry key it
 * (names never hold "@", so the first one splits it).
 */
export function versionKey(name: string, version: string): string {
  return `${name}@${version}`;
}
