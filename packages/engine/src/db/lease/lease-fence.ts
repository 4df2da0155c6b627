/** A claim's fence (R7): every write of that claim is conditional on it. */
export interface LeaseFence {
  readonly taskId: string;
  readonly holder: string;
  readonly epoch: number;
}
