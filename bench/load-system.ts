import type { System, SystemSpec } from './system';

/**
 * The system a spec names, imported only when asked for: a worker process loads only its own
 * system. A file of its own, so that the systems can import the types of system.ts without a
 * circle through here.
 */
export async function loadSystem(spec: SystemSpec): Promise<System> {
  if (spec.kind === 'causeway') return (await import('./causeway')).causewaySystem(spec);
  if (spec.kind === 'spec') return (await import('./spec-floor')).specFloorSystem(spec);
  return (await import('./raw-floor')).rawFloorSystem(spec);
}
