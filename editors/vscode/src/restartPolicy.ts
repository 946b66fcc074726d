// When to restart a server that crashed: a few times, then stop and say so, so a
// server that dies at start-up does not loop forever.

export const MAX_RESTARTS = 3;
export const WINDOW_MS = 3 * 60 * 1000;

export class RestartPolicy {
  private crashes: number[] = [];

  constructor(
    private readonly max = MAX_RESTARTS,
    private readonly windowMs = WINDOW_MS,
  ) {}

  /** Records a crash at `now` and tells whether to restart. */
  shouldRestart(now: number): boolean {
    this.crashes = this.crashes.filter((t) => now - t < this.windowMs);
    this.crashes.push(now);
    return this.crashes.length <= this.max;
  }

  /** Crashes counted in the current window. */
  get recent(): number {
    return this.crashes.length;
  }

  /** Forgets the crashes, after a restart the user asked for. */
  reset(): void {
    this.crashes = [];
  }
}
