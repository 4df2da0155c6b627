import type { ApiResolvers } from '../models';

/** Rate limits (R51) where an operator looks: the `rateLimits` query (the engine's read). */
export const rateLimitQueryFields: Pick<ApiResolvers['Query'], 'rateLimits'> = {
  rateLimits: (_root, args, context) =>
    context.services.engine.rateLimits({
      ...(args.name === null || args.name === undefined ? {} : { name: args.name }),
      ...(args.keysPerLimit === null || args.keysPerLimit === undefined
        ? {}
        : { keysPerLimit: args.keysPerLimit }),
    }),
};

export const rateLimitResolvers: Pick<ApiResolvers, 'RateLimitState' | 'RateKeyState'> = {
  RateLimitState: {},
  RateKeyState: {},
};
