/** Regenerates packages/api/src/generated/schema-types.ts from schema.graphql. */
import { writeFileSync } from 'node:fs';
import { schemaTypesFile, schemaTypesSource } from './schema-types-source';

writeFileSync(schemaTypesFile, schemaTypesSource());
console.log(`wrote ${schemaTypesFile.pathname}`);
