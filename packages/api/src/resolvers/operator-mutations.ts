import type { ApiContext } from '../context';
import { ApiError } from '../errors';
import { clearLoaders } from '../loaders';

/** The operator named by the verified token; mutations refuse without one. */
export function operatorOf(context: ApiContext): string {
  if (context.operator === null) {
    throw new ApiError(
      'UNAUTHENTICATED',
      'mutations need an operator token: send Authorization: Bearer <token>',
    );
  }
  return context.operator;
}

/**
 * Runs an operator mutation as the operator of the verified token; a repeat with the same
 * clientMutationId gets the first answer (MutationMemo).
 */
export async function remembered<T>(
  context: ApiContext,
  mutation: string,
  args: { readonly clientMutationId?: string | null },
  action: () => Promise<T>,
): Promise<T> {
  const operator = operatorOf(context);
  const { clientMutationId, ...rest } = args;
  try {
    return await context.services.memo.run(
      operator,
      clientMutationId,
      () => `${mutation}:${stableJson(rest)}`,
      action,
    );
  } finally {
    // Fields after this mutation (its payload, later mutations) must see what it changed.
    clearLoaders(context.loaders);
  }
}

function stableJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, item) =>
      item !== null && typeof item === 'object' && !Array.isArray(item) && !(item instanceof Date)
        ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)))
        : item,
    );
  } catch (error) {
    // Arguments nested deeper than the call stack: refused, as too deep to store anyway.
    if (!(error instanceof RangeError)) throw error;
    throw new ApiError('BAD_USER_INPUT', 'the arguments are nested too deeply to remember');
  }
}

/** An optional `reason` argument over the engine's limit is the argument's fault. */
export function optionalReason(reason: string | null | undefined): void {
  if (reason !== null && reason !== undefined && reason.length > 1_000) {
    throw new ApiError('BAD_USER_INPUT', 'reason is at most 1,000 characters', {
      argument: 'reason',
    });
  }
}
