import { readFileSync } from 'node:fs';
import {
  attemptOutcomes,
  blockerCodes,
  errorCategories,
  reasonCodes,
  taskStates,
  workflowStates,
} from '@causeway/workflow';
import { buildSchema, GraphQLEnumType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { renderSchemaWithDomainEnums } from '../../scripts/schema-enums';

const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));

function enumValues(name: string): string[] {
  const type = schema.getType(name);
  if (!(type instanceof GraphQLEnumType))
    throw new Error(`${name} is not an enum in schema.graphql`);
  return type.getValues().map((value) => value.name);
}

describe('schema.graphql enums mirror the domain', () => {
  it.each([
    ['TaskState', taskStates],
    ['WorkflowState', workflowStates],
    ['ReasonCode', reasonCodes],
    ['ErrorCategory', errorCategories],
    ['BlockerCode', blockerCodes],
    ['AttemptOutcome', attemptOutcomes],
  ] as const)('%s has exactly the domain values in UPPER_SNAKE', (name, values) => {
    expect(enumValues(name)).toEqual(values.map((value) => value.toUpperCase()));
  });
});

describe('schema.graphql', () => {
  it('is what `pnpm generate` writes: its domain enums come from the code', () => {
    const committed = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(renderSchemaWithDomainEnums(committed));
  });
});
