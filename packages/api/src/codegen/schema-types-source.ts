import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateSchemaTypes } from './generate-schema-types';

const repoRoot = new URL('../../../../', import.meta.url);
export const schemaFile = new URL('schema.graphql', repoRoot);
export const schemaTypesFile = new URL('packages/api/src/generated/schema-types.ts', repoRoot);

/** The generated types for the current schema.graphql, formatted as the repository formats code. */
export function schemaTypesSource(): string {
  const source = generateSchemaTypes(readFileSync(schemaFile, 'utf8'));
  return execFileSync(
    fileURLToPath(new URL('node_modules/.bin/biome', repoRoot)),
    ['format', `--stdin-file-path=${fileURLToPath(schemaTypesFile)}`],
    { input: source, encoding: 'utf8', cwd: fileURLToPath(repoRoot) },
  );
}
