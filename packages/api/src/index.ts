export { loadOperators, type OperatorConfig, operatorDirectory } from './auth';
export type { ApiContext } from './context';
export { ApiError, type ApiErrorCode, apiErrorCodes, toGraphQLError } from './errors';
export { defaultQueryLimits, type QueryLimits } from './limits';
export {
  type MetricDefinition,
  metricDefinitions,
} from './metrics/metric-definitions';
export type { MetricsOptions } from './metrics/metrics-endpoint';
export { buildApiSchema, readSchemaSource, resolvers, schemaFileUrl } from './schema';
export { type ApiMode, type ApiServer, type ApiServerOptions, createApiServer } from './server';
export { TransitionFeed } from './transition-feed';
