import { graphQLEnums } from '../generated/schema-types';

/**
 * Every enum of the schema: GraphQL values are the domain's lowercase codes in UPPER_SNAKE
 * (docs/rules.md, public surfaces), so each maps to its lowercase form (a test keeps the
 * values equal to the domain).
 */
export const enumResolvers: Readonly<Record<string, Readonly<Record<string, string>>>> =
  Object.fromEntries(
    Object.entries(graphQLEnums).map(([name, values]) => [
      name,
      Object.fromEntries(values.map((value) => [value, value.toLowerCase()])),
    ]),
  );
