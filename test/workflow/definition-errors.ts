import { DefinitionError } from '@causeway/workflow';

/** The `DefinitionError` that `define` throws; any other outcome fails the test. */
export function definitionError(define: () => unknown): DefinitionError {
  try {
    define();
  } catch (error) {
    if (error instanceof DefinitionError) return error;
    throw error;
  }
  throw new Error('expected a DefinitionError');
}
