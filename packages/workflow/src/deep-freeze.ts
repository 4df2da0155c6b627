/** A value whose objects and arrays, at every depth, are read-only. */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer Item)[]
    ? readonly DeepReadonly<Item>[]
    : T extends object
      ? { readonly [Key in keyof T]: DeepReadonly<T[Key]> }
      : T;

/**
 * Freezes `value` and every object and array reachable from it, in place, and returns it: a
 * write, `delete` or `push` then throws a TypeError in strict mode (every ES module is). The
 * engine freezes each attempt's `ctx.input` this way (R30): a step cannot change the input
 * another step or a retry sees. An object that is already frozen is taken as frozen through
 * (so cycles and values frozen before cost nothing); typed arrays, which cannot be frozen,
 * are left as they are (JSON never holds one).
 */
export function deepFreeze<T>(value: T): DeepReadonly<T> {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    if (ArrayBuffer.isView(value)) return value as DeepReadonly<T>;
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) {
      deepFreeze((value as Record<PropertyKey, unknown>)[key]);
    }
  }
  return value as DeepReadonly<T>;
}
