import { readFileSync } from 'node:fs';
import type { GraphQLSchema } from 'graphql';
import { createSchema } from 'graphql-yoga';
import type { ApiContext } from './context';
import type { ApiResolvers } from './models';
import { attemptResolvers } from './resolvers/attempts';
import { blockerResolvers } from './resolvers/blockers';
import { concurrencyResolvers } from './resolvers/concurrency';
import { enumResolvers } from './resolvers/enums';
import { eventResolvers } from './resolvers/events';
import { mutationResolvers } from './resolvers/mutations';
import { queryResolvers } from './resolvers/queries';
import { queueResolvers } from './resolvers/queues';
import { rateLimitResolvers } from './resolvers/rate-limits';
import { retentionResolvers } from './resolvers/retention';
import { scheduleResolvers } from './resolvers/schedules';
import { subscriptionResolvers } from './resolvers/subscriptions';
import { treeResolvers } from './resolvers/tree';
import { DateTimeScalar, JSONScalar } from './scalars';

/** `schema.graphql` at the repository root: the contract (schema-first). */
export const schemaFileUrl = new URL('../../../schema.graphql', import.meta.url);

export function readSchemaSource(): string {
  return readFileSync(schemaFileUrl, 'utf8');
}

/** Every object type's resolvers, typed against the generated schema types. */
export const resolvers: ApiResolvers = {
  ...queryResolvers,
  ...attemptResolvers,
  ...mutationResolvers,
  ...scheduleResolvers,
  ...queueResolvers,
  ...concurrencyResolvers,
  ...rateLimitResolvers,
  ...retentionResolvers,
  ...eventResolvers,
  ...blockerResolvers,
  ...subscriptionResolvers,
  ...treeResolvers,
};

/**
 * The executable schema: the SDL plus resolvers. graphql-tools refuses a resolver for a field
 * the SDL does not have, so the two cannot drift silently.
 */
export function buildApiSchema(typeDefs: string = readSchemaSource()): GraphQLSchema {
  return createSchema<ApiContext>({
    typeDefs,
    resolvers: [resolvers as never, enumResolvers, { DateTime: DateTimeScalar, JSON: JSONScalar }],
    resolverValidationOptions: {
      requireResolversToMatchSchema: 'error',
      requireResolversForResolveType: 'error',
    },
  });
}
