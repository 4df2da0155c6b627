/** Wakes a sleeping loop early: LISTEN/NOTIFY, a freed slot, or stop. */
export class Wakeup {
  private resolve: (() => void) | null = null;
  private pending = false;

  wake(): void {
    this.pending = true;
    this.resolve?.();
  }

  async wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.resolve = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.resolve = null;
    this.pending = false;
  }
}
