import type { GraphQLResolveInfo } from 'graphql';
import type { ModelMap, ObjectTypeName, SchemaFields } from './generated/schema-types';

/** A resolver of one field: typed by the generated schema types, so it cannot drift from the SDL. */
export type FieldResolver<Parent, Args, Context, Result> = (
  parent: Parent,
  args: Args,
  context: Context,
  info: GraphQLResolveInfo,
) => Result | Promise<Result>;

type ArgsOf<F> = F extends { args: infer A } ? A : never;
type ResultOf<F> = F extends { result: infer R } ? R : never;

/** True when graphql's default resolver (`parent[field]`) already yields the field's type. */
type DefaultResolves<Parent, Key, Result> = Key extends keyof Parent
  ? [Parent[Key]] extends [Result]
    ? true
    : false
  : false;

type Fields<M extends ModelMap, T extends ObjectTypeName> = SchemaFields<M>[T];

/**
 * Resolvers of one object type: a field whose value the parent model already has (same name,
 * compatible type) may omit its resolver; every other field must have one.
 */
export type TypeResolvers<M extends ModelMap, Context, T extends ObjectTypeName> = {
  [K in keyof Fields<M, T> as DefaultResolves<M[T], K, ResultOf<Fields<M, T>[K]>> extends true
    ? never
    : K]-?: FieldResolver<M[T], ArgsOf<Fields<M, T>[K]>, Context, ResultOf<Fields<M, T>[K]>>;
} & {
  [K in keyof Fields<M, T> as DefaultResolves<M[T], K, ResultOf<Fields<M, T>[K]>> extends true
    ? K
    : never]?: FieldResolver<M[T], ArgsOf<Fields<M, T>[K]>, Context, ResultOf<Fields<M, T>[K]>>;
};

/** Subscription fields: `subscribe` yields payloads, `resolve` turns each into the field's value. */
export type SubscriptionResolvers<M extends ModelMap, Context> = {
  [K in keyof Fields<M, 'Subscription'>]-?: {
    subscribe: FieldResolver<
      M['Subscription'],
      ArgsOf<Fields<M, 'Subscription'>[K]>,
      Context,
      AsyncIterable<ResultOf<Fields<M, 'Subscription'>[K]>>
    >;
    resolve: FieldResolver<
      ResultOf<Fields<M, 'Subscription'>[K]>,
      ArgsOf<Fields<M, 'Subscription'>[K]>,
      Context,
      ResultOf<Fields<M, 'Subscription'>[K]>
    >;
  };
};

/** Every object type of the schema with its resolvers (types without custom fields map to {}). */
export type Resolvers<M extends ModelMap, Context> = {
  [T in Exclude<ObjectTypeName, 'Subscription'>]: TypeResolvers<M, Context, T>;
} & { Subscription: SubscriptionResolvers<M, Context> };
