export type { Engine } from '@causeway/engine';
export { startChild, startChildren } from '@causeway/workflow/internal';
