/** Prints the report tables for results files: `pnpm exec tsx bench/summarize.ts bench/results/<stamp>.json ...` */
import { readFileSync } from 'node:fs';
import type { RunRecord } from './record';
import { formatReport } from './report';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: tsx bench/summarize.ts <results.json> [...]');
  process.exit(2);
}
const records = files.flatMap((file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as RunRecord),
);
console.log(formatReport(records));
