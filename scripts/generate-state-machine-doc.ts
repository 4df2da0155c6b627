import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderStateMachineDoc } from './state-machine-doc';

const target = fileURLToPath(new URL('../docs/state-machine.md', import.meta.url));
writeFileSync(target, renderStateMachineDoc());
console.log(`wrote ${target}`);
