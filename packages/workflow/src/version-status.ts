/**
 * Where a workflow version stands in a rolling deploy (R54):
 * - `serving`: some live engine lists it as its latest, so new submits there take it;
 * - `draining`: no live engine lists it as its latest, and workflows of it are in flight;
 * - `drained`: neither: nothing in flight, safe to delete from the code.
 */
export const versionStatuses = ['serving', 'draining', 'drained'] as const;
export type VersionStatus = (typeof versionStatuses)[number];

/** The status of a version from what the registry and the workflows say of it. */
export function versionStatus(facts: {
  /** Some live engine lists it as its latest. */
  readonly latestOnLiveEngine: boolean;
  /** Its workflows not yet terminal. */
  readonly inFlight: number;
}): VersionStatus {
  if (facts.latestOnLiveEngine) return 'serving';
  return facts.inFlight > 0 ? 'draining' : 'drained';
}
