/**
 * The load beside the subscription and bad-input scenarios, short (pnpm test) and long
 * (pnpm test:reliability), with its worker processes; and the seed every scenario draws from.
 */
import type { LoadShape } from './load-driver';

export interface RigShape {
  readonly workers: number;
  readonly concurrency: number;
  readonly leaseMs: number;
}

export const shortSideLoad: LoadShape & RigShape = {
  oneStep: 600,
  threeStep: 150,
  waiting: 50,
  effectEvery: 10,
  batch: 100,
  batchPauseMs: 300,
  maxBacklog: 300,
  workers: 2,
  concurrency: 8,
  leaseMs: 2_000,
};

export const longSideLoad: LoadShape & RigShape = {
  oneStep: 16_000,
  threeStep: 3_000,
  waiting: 1_000,
  effectEvery: 20,
  batch: 1_000,
  batchPauseMs: 100,
  maxBacklog: 3_000,
  workers: 6,
  concurrency: 10,
  leaseMs: 2_000,
};

/** RELIABILITY_SEED repeats a run (each scenario prints the seed it used in its result). */
export function scenarioSeed(): number {
  return Number(process.env.RELIABILITY_SEED ?? Date.now() % 1_000_000);
}
