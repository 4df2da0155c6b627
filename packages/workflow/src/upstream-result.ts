import type { StepReturn } from './define-workflow';
import type { SnoozeRequest } from './step-results';

/**
 * What a downstream step reads in `ctx.results` for a step whose `run` returns `TReturn`.
 *
 * - A step that may return `awaitReceipt(...)` or `send(...)` (or any other request besides an
 *   output) finishes with its receipt's result, which only the external system knows: `unknown`.
 * - Otherwise its output as the engine stores it, as JSON (`StoredJson`): `undefined` becomes
 *   `null`, a `Date` a string, functions and `undefined` properties disappear. For plain data
 *   that is the output type itself, read-only.
 * - An output typed `any` or `unknown` gives `unknown`: nothing is known to read.
 * - A `snooze(...)` is not a result: the step runs again later and returns one (R36).
 */
export type UpstreamResult<TReturn> = SettledResult<Exclude<Awaited<TReturn>, SnoozeRequest>>;

type SettledResult<TOutput> =
  IsAnyOrUnknown<TOutput> extends true
    ? unknown
    : [Extract<TOutput, StepReturn<never>>] extends [never]
      ? StoredJson<TOutput>
      : unknown;

/**
 * `T` after `JSON.parse(JSON.stringify(value))`, where `value` is the root of a step's output
 * (the engine stores `undefined` there as `null`). Number values that JSON cannot hold (`NaN`,
 * `Infinity`) stay `number`; class instances are typed by their own properties.
 */
export type StoredJson<T> =
  IsAnyOrUnknown<T> extends true ? unknown : T extends void ? null : JsonValue<T>;

/** Values that JSON leaves out of an object (and writes as `null` in an array). */
type Unstorable = undefined | symbol | ((...args: never[]) => unknown);

type IsAnyOrUnknown<T> = 0 extends 1 & T ? true : unknown extends T ? true : false;

type JsonValue<T> = T extends string | number | boolean | null
  ? T
  : T extends Unstorable | bigint // a bigint makes JSON.stringify throw: no output at all
    ? never
    : T extends { toJSON(...args: never[]): infer Json }
      ? StoredJson<Json>
      : T extends readonly unknown[]
        ? { readonly [Index in keyof T]: JsonItem<T[Index]> }
        : { readonly [Key in keyof T as StoredKey<T, Key>]: JsonProperty<T[Key]> };

type JsonItem<T> =
  IsAnyOrUnknown<T> extends true ? unknown : T extends Unstorable ? null : JsonValue<T>;

/** A property that may hold something JSON leaves out may be missing. */
type JsonProperty<T> =
  IsAnyOrUnknown<T> extends true
    ? unknown
    : [Extract<T, Unstorable>] extends [never]
      ? JsonValue<T>
      : JsonValue<T> | undefined;

type StoredKey<T, Key extends keyof T> = Key extends string | number
  ? [T[Key]] extends [Unstorable]
    ? never
    : Key
  : never;
