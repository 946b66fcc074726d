// When the run's index is done, and what happens then, exactly once per index. The
// extension learns it two ways: the indexing progress's end, and a run/info poll
// begun when the server starts (a server may send no progress: a run reopened from
// its cache is done before a progress would show, or the progress ended before the
// client listened). Either may come first, or only one of them; the work done at
// "indexed" (the status ready, run/info for the status bar, the Failures view asked
// again, a partial answer asked again) must run once, not once per way.

import type { RunInfo } from './protocol';

/**
 * Runs `onIndexed` once per index. A server's start (a new client, or the same
 * client restarted after a crash) opens a session: its first index is awaited anew.
 * A progress that begins later in a session (the server indexes the run afresh
 * after a settings change) arms it again, so its end runs `onIndexed` once more.
 */
export class IndexedOnce {
  private session = 0;
  private armed = false;

  /**
   * `onIndexed` gets run/info's answer when the poll saw the index done, undefined
   * when the progress's end said so (run/info is then the caller's to ask).
   */
  constructor(private readonly onIndexed: (info: RunInfo | undefined) => void) {}

  /** A server started: its first index is awaited. Returns the session for the poll. */
  started(): number {
    this.armed = true;
    return ++this.session;
  }

  /** An indexing progress began in the current session: its end is an index done. */
  progressBegan(): void {
    this.armed = true;
  }

  /** An indexing progress ended: the current session's index is done. */
  progressEnded(): boolean {
    return this.done(this.session, undefined);
  }

  /** Whether `session` is the current one and its index is not done yet: the poll goes on. */
  waiting(session: number): boolean {
    return session === this.session && this.armed;
  }

  /**
   * run/info's answer for `session`: a done index runs `onIndexed` unless the
   * progress's end ran it already. An answer of an older session (a poll still in
   * flight across a restart) does nothing.
   */
  polled(session: number, info: RunInfo): boolean {
    return info.indexing.done ? this.done(session, info) : false;
  }

  private done(session: number, info: RunInfo | undefined): boolean {
    if (!this.waiting(session)) return false;
    this.armed = false;
    this.onIndexed(info);
    return true;
  }

  /**
   * Asks run/info every `intervalMs` until `session`'s index is done (by this poll or
   * by the progress's end), the server is gone (`alive` false), or the session is
   * over. A failed ask is retried: the server may still be starting.
   */
  async poll(
    session: number,
    ask: () => Promise<RunInfo>,
    opts: { alive: () => boolean; intervalMs?: number; sleep?: (ms: number) => Promise<void>; onError?: (e: unknown) => void },
  ): Promise<void> {
    const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    while (this.waiting(session) && opts.alive()) {
      try {
        if (this.polled(session, await ask())) return;
      } catch (e) {
        opts.onError?.(e);
      }
      if (!this.waiting(session)) return;
      await sleep(opts.intervalMs ?? 250);
    }
  }
}
