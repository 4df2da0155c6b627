import { readFileSync } from 'node:fs';
import { buildApiSchema, resolvers } from '@causeway/api';
import type {
  AttemptOutcome,
  ErrorCategory,
  ReasonCode,
  TaskState,
  WorkflowState,
} from '@causeway/workflow';
import { GraphQLEnumType, GraphQLObjectType } from 'graphql';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  schemaTypesFile,
  schemaTypesSource,
} from '../../packages/api/src/codegen/schema-types-source';
import type * as Generated from '../../packages/api/src/generated/schema-types';

describe('schema.graphql is the source of truth for the resolvers', () => {
  it('the generated resolver types are up to date (run `pnpm generate`)', () => {
    expect(readFileSync(schemaTypesFile, 'utf8')).toBe(schemaTypesSource());
  });

  it('the executable schema builds from the file: no resolver for a field the SDL lacks', () => {
    const schema = buildApiSchema();
    for (const [typeName, fields] of Object.entries(resolvers)) {
      const type = schema.getType(typeName);
      expect(type, typeName).toBeInstanceOf(GraphQLObjectType);
      const known = Object.keys((type as GraphQLObjectType).getFields());
      for (const field of Object.keys(fields))
        expect(known, `${typeName}.${field}`).toContain(field);
    }
    // Every root field has a resolver of its own (none relies on a default property read).
    for (const root of ['Query', 'Mutation', 'Subscription'] as const) {
      const type = schema.getType(root) as GraphQLObjectType;
      expect(Object.keys(resolvers[root]).sort(), root).toEqual(
        Object.keys(type.getFields()).sort(),
      );
    }
    expect(() =>
      buildApiSchema(
        `${readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8')}\nextend type Query { extra: Int }`,
      ),
    ).not.toThrow();
    expect(() => buildApiSchema('type Query { definitions: Int }')).toThrow(
      /defined in resolvers, but not in schema/,
    );
  });

  it('every enum resolves to the domain lowercase values', () => {
    const schema = buildApiSchema();
    const enums = Object.values(schema.getTypeMap()).filter(
      (type): type is GraphQLEnumType =>
        type instanceof GraphQLEnumType && !type.name.startsWith('__'),
    );
    expect(enums.length).toBeGreaterThanOrEqual(5);
    for (const type of enums) {
      for (const value of type.getValues())
        expect(value.value, `${type.name}.${value.name}`).toBe(value.name.toLowerCase());
    }
  });

  it('generated enum types are exactly the domain unions', () => {
    expectTypeOf<Generated.TaskState>().toEqualTypeOf<TaskState>();
    expectTypeOf<Generated.WorkflowState>().toEqualTypeOf<WorkflowState>();
    expectTypeOf<Generated.ReasonCode>().toEqualTypeOf<ReasonCode>();
    expectTypeOf<Generated.ErrorCategory>().toEqualTypeOf<ErrorCategory>();
    expectTypeOf<Generated.AttemptOutcome>().toEqualTypeOf<AttemptOutcome>();
  });
});
