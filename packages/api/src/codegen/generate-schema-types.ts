import {
  buildSchema,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from 'graphql';

/**
 * Generates TypeScript types from `schema.graphql` (schema-first: the SDL is the source of
 * truth). Dependency-free: graphql-js reads the SDL; a test regenerates and compares, so the
 * checked-in file cannot drift from the schema.
 *
 * - Enums become unions of the domain's lowercase values (`AWAITING_RECEIPT` →
 *   `'awaiting_receipt'`): resolvers map every enum that way.
 * - Arguments become `<Type><Field>Args` interfaces.
 * - `SchemaFields<M>` describes every object field's arguments and result, with object types
 *   taken from a model map `M` (the TypeScript value each GraphQL type resolves from), so
 *   resolvers are checked against it (see resolver-types.ts).
 */
export function generateSchemaTypes(sdl: string): string {
  const schema = buildSchema(sdl);
  const types = Object.values(schema.getTypeMap())
    .filter((type) => !type.name.startsWith('__'))
    .sort((a, b) => a.name.localeCompare(b.name));
  const scalars = types.filter(isScalarType).map((type) => type.name);
  const customScalars = scalars.filter(
    (name) => !['ID', 'String', 'Int', 'Float', 'Boolean'].includes(name),
  );
  const objects = types.filter(isObjectType);
  const objectNames = new Set(objects.map((type) => type.name));
  const output = (type: GraphQLOutputType, nullable = true): string => {
    if (isNonNullType(type)) return output(type.ofType, false);
    const wrap = (text: string) => (nullable ? `Maybe<${text}>` : text);
    if (isListType(type)) return wrap(`readonly ${output(type.ofType as GraphQLOutputType)}[]`);
    return wrap(objectNames.has(type.name) ? `M['${type.name}']` : named(type.name));
  };
  const lines: string[] = [
    '// Generated from schema.graphql by packages/api/src/codegen. Do not edit: run',
    '// `pnpm generate` (test/api/schema-types.test.ts checks it).',
    '/* eslint-disable */',
    '',
    'export type Maybe<T> = T | null | undefined;',
    '',
    '/** TypeScript values of the scalars (custom ones as the resolvers parse and serialize them). */',
    'export interface Scalars {',
    '  ID: string;',
    '  String: string;',
    '  Int: number;',
    '  Float: number;',
    '  Boolean: boolean;',
    ...customScalars.map((name) => `  ${name}: ${customScalarType(name)};`),
    '}',
    '',
  ];
  for (const type of types.filter(isEnumType)) {
    lines.push(`/** GraphQL enum ${type.name}, as the domain's lowercase codes. */`);
    lines.push(
      `export type ${type.name} =\n${type
        .getValues()
        .map((value) => `  | '${value.name.toLowerCase()}'`)
        .join('\n')};`,
    );
    lines.push(`export const ${lowerFirst(type.name)}GraphQLValues = [`);
    for (const value of type.getValues()) lines.push(`  '${value.name}',`);
    lines.push('] as const;');
    lines.push('');
  }
  const enums = types.filter(isEnumType);
  lines.push('/** Every enum of the schema with its GraphQL values. */');
  lines.push('export const graphQLEnums = {');
  for (const type of enums) lines.push(`  ${type.name}: ${lowerFirst(type.name)}GraphQLValues,`);
  lines.push('} as const;');
  lines.push('');
  for (const type of types.filter(isInputObjectType)) {
    lines.push(`export interface ${type.name} {`);
    for (const field of Object.values(type.getFields())) {
      lines.push(`  ${argumentLine(field.name, field.type)}`);
    }
    lines.push('}');
    lines.push('');
  }
  for (const type of objects) {
    for (const field of Object.values(type.getFields())) {
      if (field.args.length === 0) continue;
      lines.push(`export interface ${argsName(type.name, field.name)} {`);
      for (const argument of field.args)
        lines.push(`  ${argumentLine(argument.name, argument.type)}`);
      lines.push('}');
      lines.push('');
    }
  }
  lines.push(
    `export type ObjectTypeName =\n${objects.map((type) => `  | '${type.name}'`).join('\n')};`,
  );
  lines.push('');
  lines.push(
    '/** The TypeScript value each object type resolves from (the "parent" of its fields). */',
  );
  lines.push('export type ModelMap = { readonly [Name in ObjectTypeName]: unknown };');
  lines.push('');
  lines.push('/** Every object field: its arguments and the value its resolver must produce. */');
  lines.push('export interface SchemaFields<M extends ModelMap> {');
  for (const type of objects) {
    lines.push(`  ${type.name}: {`);
    for (const field of Object.values(type.getFields())) {
      lines.push(
        `    ${field.name}: { args: ${fieldArgs(type.name, field)}; result: ${output(field.type)} };`,
      );
    }
    lines.push('  };');
  }
  lines.push('}');
  lines.push('');
  return `${lines.join('\n')}`;
}

function customScalarType(name: string): string {
  switch (name) {
    case 'DateTime':
      return 'Date';
    case 'JSON':
      return 'unknown';
    default:
      return 'unknown';
  }
}

function fieldArgs(typeName: string, field: GraphQLField<unknown, unknown>): string {
  return field.args.length === 0 ? 'Record<string, never>' : argsName(typeName, field.name);
}

function argsName(typeName: string, fieldName: string): string {
  return `${typeName}${fieldName[0]?.toUpperCase()}${fieldName.slice(1)}Args`;
}

function argumentLine(name: string, type: GraphQLInputType): string {
  return isNonNullType(type)
    ? `readonly ${name}: ${input(type.ofType)};`
    : `readonly ${name}?: ${input(type)} | null;`;
}

function input(type: GraphQLInputType): string {
  if (isNonNullType(type)) return input(type.ofType);
  if (isListType(type)) {
    const item = type.ofType as GraphQLInputType;
    return `readonly ${isNonNullType(item) ? input(item) : `(${input(item)} | null)`}[]`;
  }
  return named(type.name);
}

function named(name: string): string {
  return ['ID', 'String', 'Int', 'Float', 'Boolean', 'DateTime', 'JSON'].includes(name)
    ? `Scalars['${name}']`
    : name;
}

function lowerFirst(text: string): string {
  return `${text[0]?.toLowerCase()}${text.slice(1)}`;
}
