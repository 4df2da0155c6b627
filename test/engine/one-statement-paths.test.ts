/**
 * The one-statement claim and settle are derived from the machine and the edge table at engine
 * start. The shipped table derives both; a table they cannot follow stops the engine with an
 * error naming the edge, instead of quietly turning a path off.
 */
import { type EdgeRule, taskEdges } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { deriveOneStatementPaths } from '../../packages/engine/src/runtime/one-statement-paths';

/** The shipped table with one row changed. */
function withRow(
  match: (rule: EdgeRule) => boolean,
  change: Partial<EdgeRule>,
): readonly EdgeRule[] {
  let changed = 0;
  const rules = taskEdges.map((rule) => {
    if (!match(rule)) return rule;
    changed += 1;
    return { ...rule, ...change };
  });
  expect(changed).toBe(1);
  return rules;
}

const isClaim = (rule: EdgeRule) => rule.from === 'queued' && rule.to === 'leased';
const isComplete = (rule: EdgeRule) => rule.from === 'leased' && rule.to === 'succeeded';
const isPromotion = (rule: EdgeRule) => rule.from === 'pending' && rule.to === 'queued';

describe('the one-statement paths', () => {
  it('are derived from the shipped edge table: claim, complete, promotion and chained claim', () => {
    const paths = deriveOneStatementPaths();
    expect(paths.claim).toMatchObject({ from: 'queued', to: 'leased', reason: 'lease_acquired' });
    expect(paths.claim.effects).toMatchObject({ lease: 'take', attempt: 'next', marker: 'reset' });
    expect(paths.settle.completeFrom).toEqual(['leased', 'cancel_requested']);
    expect(paths.settle.completeReason).toEqual(['completed', 'cancel_after_submit']);
    expect(paths.settle.completeEffects).toMatchObject({ lease: 'release', receipt: 'clear' });
    expect(paths.settle).toMatchObject({
      promoteFrom: 'pending',
      promoteTo: 'queued',
      promoteReason: 'upstream_succeeded',
      upstreamState: 'succeeded',
    });
    expect(paths.settle.promoteEffects).toMatchObject({ runAt: 'delay', lease: 'release' });
  });

  it('refuse a claim edge that does not take the lease', () => {
    expect(() => deriveOneStatementPaths(withRow(isClaim, { lease: 'keep' }))).toThrow(
      /one-statement claim .*queued → leased does not take the lease/,
    );
  });

  it('refuse a claim or promotion whose run_at is a backoff only the machine computes', () => {
    expect(() => deriveOneStatementPaths(withRow(isClaim, { runAt: 'backoff' }))).toThrow(
      /one-statement claim .*queued → leased sets run_at to a backoff/,
    );
    expect(() => deriveOneStatementPaths(withRow(isPromotion, { runAt: 'backoff' }))).toThrow(
      /one-statement settle .*pending → queued sets run_at to a backoff/,
    );
  });

  it('refuse complete edges whose effects differ by the state they leave', () => {
    expect(() => deriveOneStatementPaths(withRow(isComplete, { attempt: 'refund' }))).toThrow(
      /one-statement settle .*complete edges from different states differ in effects/,
    );
  });

  it('refuse a table without the row the machine takes', () => {
    expect(() => deriveOneStatementPaths(taskEdges.filter((rule) => !isClaim(rule)))).toThrow(
      /one-statement claim .*no row for the claim edge queued → leased/,
    );
    expect(() => deriveOneStatementPaths(taskEdges.filter((rule) => !isComplete(rule)))).toThrow(
      /one-statement settle .*no row for leased → succeeded/,
    );
  });
});
