import { DefinitionError, type WorkflowDefinition } from './define-workflow';
import { versionKey, workflowVersion } from './workflow-version';

/**
 * The workflows an engine defines (R54). As a map it gives, by name, the latest version
 * listed: the one new submits (and new children) take. `at` finds the version a stored
 * workflow records; `versions` lists every version, in the order given.
 */
export interface WorkflowRegistry extends ReadonlyMap<string, WorkflowDefinition> {
  /** Every version of every workflow, in the order listed. */
  readonly versions: readonly WorkflowDefinition[];
  /**
   * The definition of `name` at `version`; a null version (a workflow stored before versions
   * were recorded) is taken by the latest version of the name.
   */
  at(name: string, version: string | null): WorkflowDefinition | undefined;
}

class VersionedRegistry extends Map<string, WorkflowDefinition> implements WorkflowRegistry {
  readonly versions: readonly WorkflowDefinition[];
  private readonly byVersion: ReadonlyMap<string, WorkflowDefinition>;

  constructor(versions: readonly WorkflowDefinition[]) {
    super(versions.map((definition) => [definition.name, definition]));
    this.versions = Object.freeze([...versions]);
    this.byVersion = new Map(
      versions.map((definition) => [
        versionKey(definition.name, workflowVersion(definition)),
        definition,
      ]),
    );
  }

  at(name: string, version: string | null): WorkflowDefinition | undefined {
    return version === null ? this.get(name) : this.byVersion.get(versionKey(name, version));
  }
}

/**
 * The definition of `name` at `version` in `definitions`: a registry's `at`; in a plain map of
 * one definition per name (a reader's), that one if its version is the one asked for.
 */
export function definitionAt(
  definitions: ReadonlyMap<string, WorkflowDefinition>,
  name: string,
  version: string | null,
): WorkflowDefinition | undefined {
  if (definitions instanceof VersionedRegistry) return definitions.at(name, version);
  const latest = definitions.get(name);
  if (latest === undefined || version === null) return latest;
  return workflowVersion(latest) === version ? latest : undefined;
}

/** Every version `definitions` holds: a registry's `versions`, a plain map's values. */
export function everyVersion(
  definitions: ReadonlyMap<string, WorkflowDefinition>,
): readonly WorkflowDefinition[] {
  return definitions instanceof VersionedRegistry
    ? definitions.versions
    : [...definitions.values()];
}

/**
 * The registry of `definitions`: several versions of one name may be listed, the last one
 * listed is the latest. Two definitions of one name and version are a `duplicate_version`
 * error; one definition listed twice is listed once. (The one-step children of map steps
 * (R44) take their parent's version, so two versions of a parent never clash through them.)
 */
export function workflowRegistry(definitions: readonly WorkflowDefinition[]): WorkflowRegistry {
  const kept = new Map<string, WorkflowDefinition>();
  const duplicates: string[] = [];
  for (const definition of definitions) {
    const version = workflowVersion(definition);
    const key = versionKey(definition.name, version);
    const earlier = kept.get(key);
    if (earlier !== undefined && earlier !== definition) {
      duplicates.push(`two definitions of workflow "${definition.name}" have version "${version}"`);
    }
    kept.set(key, definition);
  }
  if (duplicates.length > 0) {
    throw new DefinitionError('workflow registry', duplicates, 'duplicate_version');
  }
  return new VersionedRegistry([...new Set(definitions)]);
}
