import { describe, expect, it } from 'vitest';
import {
  AdaptivePrefetch,
  prefetchPerSlot,
  prefetchWindowMs,
} from '../../packages/engine/src/runtime/worker/prefetch';

describe('adaptive prefetch', () => {
  it('holds nothing waiting before any handler has finished', () => {
    expect(new AdaptivePrefetch(10).limit).toBe(0);
  });

  it('holds what the pool starts within the window at the recent pace, capped per slot', () => {
    const prefetch = new AdaptivePrefetch(10);
    for (let i = 0; i < 50; i += 1) prefetch.record(0.05);
    expect(prefetch.limit).toBe(prefetchPerSlot * 10);
    const paced = new AdaptivePrefetch(10);
    for (let i = 0; i < 50; i += 1) paced.record(prefetchWindowMs * 2);
    // 10 slots start 10 tasks per 20 ms: 5 within a 10 ms window.
    expect(paced.limit).toBe(5);
  });

  it('holds none for handlers slower than the window, and follows a change of pace', () => {
    const prefetch = new AdaptivePrefetch(4);
    for (let i = 0; i < 50; i += 1) prefetch.record(0.1);
    expect(prefetch.limit).toBe(prefetchPerSlot * 4);
    for (let i = 0; i < 50; i += 1) prefetch.record(500);
    expect(prefetch.limit).toBe(0);
  });
});
