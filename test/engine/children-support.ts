export type { Engine } from '@causeway/engine';
export { map, startChild, startChildren, workflow } from '@causeway/workflow';
