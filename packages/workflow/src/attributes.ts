/**
 * Searchable attributes of a workflow (R55): a few typed labels (`tenant: "acme"`, `region`,
 * `priority: 5`, `urgent: true`) fixed at admission like the input, inherited by child
 * workflows, and found again through an index. A value keeps its type: the number 5 and the
 * string "5" are different values and never match each other.
 */

/** What an attribute may hold. */
export type AttributeValue = string | number | boolean;

/** A workflow's attributes by key; `{}` when it has none. */
export type WorkflowAttributes = Readonly<Record<string, AttributeValue>>;

/**
 * The bounds of a workflow's attributes. A key starts with a letter and goes on with letters,
 * digits, `_`, `.` or `-` (so `=` separates a key from its value on the command line); a string
 * value is text Postgres can store; a number is finite.
 */
export const attributeLimits = Object.freeze({
  maxKeys: 16,
  maxKeyLength: 64,
  maxStringLength: 256,
});

export const attributeKeyPattern = /^[A-Za-z][A-Za-z0-9_.-]*$/;

/** What is wrong with one attribute key, or null. */
export function attributeKeyProblem(key: string): string | null {
  if (key.length > attributeLimits.maxKeyLength) {
    return `attribute key ${JSON.stringify(key.slice(0, 80))} is ${key.length} characters, over the limit of ${attributeLimits.maxKeyLength}`;
  }
  if (!attributeKeyPattern.test(key)) {
    return `attribute key ${JSON.stringify(key)} must start with a letter and hold only letters, digits, "_", "." or "-"`;
  }
  return null;
}

/** What is wrong with one attribute's value, or null. */
export function attributeValueProblem(key: string, value: unknown): string | null {
  const where = `attribute ${JSON.stringify(key)}`;
  if (typeof value === 'boolean') return null;
  if (typeof value === 'number') {
    return Number.isFinite(value) ? null : `${where} is ${value}: numbers must be finite`;
  }
  if (typeof value === 'string') {
    if (value.length > attributeLimits.maxStringLength) {
      return `${where} is ${value.length} characters, over the limit of ${attributeLimits.maxStringLength}`;
    }
    if (value.includes('\u0000')) return `${where} has a NUL character (\\u0000)`;
    if (!value.isWellFormed()) return `${where} has a lone UTF-16 surrogate`;
    return null;
  }
  const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
  return `${where} is ${kind}: a value must be a string, a number or a boolean`;
}

/** What is wrong with a set of attributes (its shape, count, keys and values), or null. */
export function attributesProblem(attributes: unknown): string | null {
  if (
    typeof attributes !== 'object' ||
    attributes === null ||
    Array.isArray(attributes) ||
    (Object.getPrototypeOf(attributes) !== Object.prototype &&
      Object.getPrototypeOf(attributes) !== null)
  ) {
    return 'attributes must be a plain object of keys to strings, numbers or booleans';
  }
  const entries = Object.entries(attributes);
  if (entries.length > attributeLimits.maxKeys) {
    return `${entries.length} attributes is over the limit of ${attributeLimits.maxKeys}`;
  }
  for (const [key, value] of entries) {
    const problem = attributeKeyProblem(key) ?? attributeValueProblem(key, value);
    if (problem !== null) return problem;
  }
  return null;
}

/** Attributes from one source, named for the refusal that a conflict gets. */
export interface AttributeSource {
  /** E.g. "the submit's attributes", "the parent's attributes". */
  readonly label: string;
  readonly attributes: WorkflowAttributes;
}

/**
 * The union of several sources' attributes (each already checked): a key given by two sources
 * must have the same value (type included) in both, since keeping either would drop the other
 * without a word; together they hold at most `maxKeys` keys. Sorted by key, frozen.
 */
export function mergedAttributes(
  sources: readonly AttributeSource[],
):
  | { readonly ok: true; readonly attributes: WorkflowAttributes }
  | { readonly ok: false; readonly problem: string } {
  const merged = new Map<string, { value: AttributeValue; label: string }>();
  for (const source of sources) {
    for (const [key, value] of Object.entries(source.attributes)) {
      const earlier = merged.get(key);
      if (earlier === undefined) {
        merged.set(key, { value, label: source.label });
      } else if (!Object.is(earlier.value, value) && earlier.value !== value) {
        return {
          ok: false,
          problem: `attribute ${JSON.stringify(key)} is ${JSON.stringify(earlier.value)} in ${earlier.label} but ${JSON.stringify(value)} in ${source.label}: a key given twice must have one value`,
        };
      }
    }
  }
  if (merged.size > attributeLimits.maxKeys) {
    return {
      ok: false,
      problem: `${sources.map((source) => source.label).join(' and ')} make ${merged.size} attributes together, over the limit of ${attributeLimits.maxKeys}`,
    };
  }
  const sorted = [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    ok: true,
    attributes: Object.freeze(Object.fromEntries(sorted.map(([key, { value }]) => [key, value]))),
  };
}

/**
 * The attributes a definition's `attributes(input)` gives for an admitted input, or why there
 * are none (R55, R58: a function that throws or returns something out of bounds refuses).
 */
export function definitionAttributesOf(
  attributesOf: ((input: never) => unknown) | null,
  input: unknown,
):
  | { readonly ok: true; readonly attributes: WorkflowAttributes }
  | { readonly ok: false; readonly problem: string } {
  if (attributesOf === null) return { ok: true, attributes: {} };
  let given: unknown;
  try {
    given = (attributesOf as (input: unknown) => unknown)(input);
  } catch (error) {
    return { ok: false, problem: `the definition's attributes function threw: ${String(error)}` };
  }
  const problem = attributesProblem(given);
  if (problem !== null) {
    return {
      ok: false,
      problem: `the definition's attributes function returned attributes out of bounds: ${problem}`,
    };
  }
  return { ok: true, attributes: given as WorkflowAttributes };
}
