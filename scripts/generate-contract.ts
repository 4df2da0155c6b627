/**
 * `pnpm generate`: writes what is generated from the domain's data, so a new state, edge or
 * reason code is a change to the code alone: docs/state-machine.md, docs/blockers.md, the domain enums of
 * schema.graphql, and the API's resolver types from schema.graphql. Tests fail when a
 * committed file differs from what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  schemaTypesFile,
  schemaTypesSource,
} from '../packages/api/src/codegen/schema-types-source';
import { renderBlockersDoc } from './blockers-doc';
import { renderSchemaWithDomainEnums } from './schema-enums';
import { renderStateMachineDoc } from './state-machine-doc';

const doc = fileURLToPath(new URL('../docs/state-machine.md', import.meta.url));
writeFileSync(doc, renderStateMachineDoc());
console.log(`wrote ${doc}`);
const blockersDoc = fileURLToPath(new URL('../docs/blockers.md', import.meta.url));
writeFileSync(blockersDoc, renderBlockersDoc());
console.log(`wrote ${blockersDoc}`);
const schema = fileURLToPath(new URL('../schema.graphql', import.meta.url));
writeFileSync(schema, renderSchemaWithDomainEnums(readFileSync(schema, 'utf8')));
console.log(`wrote ${schema}`);
// After the schema: the types are generated from the file just written.
writeFileSync(schemaTypesFile, schemaTypesSource());
console.log(`wrote ${fileURLToPath(schemaTypesFile)}`);
