export { loadOperators, type OperatorConfig, operatorDirectory } from './auth';
export type { ApiContext } from './context';
export { ApiError, type ApiErrorCode, apiErrorCodes, toGraphQLError } from './errors';
export { createEventReads, type EventReads } from './event-reads';
export { defaultQueryLimits, type QueryLimits } from './limits';
export { buildApiSchema, readSchemaSource, resolvers, schemaFileUrl } from './schema';
export { type ApiMode, type ApiServer, type ApiServerOptions, createApiServer } from './server';
export { TransitionFeed } from './transition-feed';
