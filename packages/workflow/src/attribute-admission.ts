import type { AdmissionError } from './admission';
import {
  type AttributeSource,
  attributesProblem,
  definitionAttributesOf,
  mergedAttributes,
  type WorkflowAttributes,
} from './attributes';

/**
 * A workflow's attributes at admission (R55): the caller's (a submit's, or for a child the
 * `startChildren` call's; checked here), the definition's `attributes(input)` and, for a
 * child, its parent's, merged by `mergedAttributes`. Null when none of them gives any, so a
 * workflow without attributes stores nothing for them. Refused with a stable code, never
 * trimmed. `callerLabel` names the caller's in a conflict ("the submit's attributes").
 */
export function admitAttributes(
  definition: { readonly attributes?: ((input: never) => unknown) | undefined },
  input: unknown,
  given: {
    readonly caller?: unknown;
    readonly callerLabel?: string;
    readonly parent?: WorkflowAttributes;
  },
):
  | { readonly ok: true; readonly attributes: WorkflowAttributes | null }
  | { readonly ok: false; readonly error: AdmissionError } {
  const inherited = given.parent !== undefined && Object.keys(given.parent).length > 0;
  // The common submit has none: it pays for no merge.
  if (!inherited && given.caller === undefined && definition.attributes === undefined) {
    return { ok: true, attributes: null };
  }
  const sources: AttributeSource[] = [];
  if (inherited) {
    sources.push({ label: "the parent's attributes", attributes: given.parent });
  }
  if (given.caller !== undefined) {
    const problem = attributesProblem(given.caller);
    if (problem !== null) return refused('invalid_attributes', problem);
    sources.push({
      label: given.callerLabel ?? "the submit's attributes",
      attributes: given.caller as WorkflowAttributes,
    });
  }
  const own = definitionAttributesOf(definition.attributes ?? null, input);
  if (!own.ok) return refused('invalid_definition_attributes', own.problem);
  sources.push({ label: "the definition's attributes", attributes: own.attributes });
  const merged = mergedAttributes(sources);
  if (!merged.ok) return refused('conflicting_attributes', merged.problem);
  return {
    ok: true,
    attributes: Object.keys(merged.attributes).length === 0 ? null : merged.attributes,
  };
}

function refused(
  code: AdmissionError['code'],
  message: string,
): { readonly ok: false; readonly error: AdmissionError } {
  return { ok: false, error: { code, message } };
}
