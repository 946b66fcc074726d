// Answers made while the run's first index is built (spec §12, issue 33): a run/search
// result with the `indexing` notice covers only part of the run. The view shows it as
// partial, and the search is asked again once indexing ends: at the indexing
// progress's end, or at once when run/info already says done (the answer was on its
// way as indexing ended). docs/partial.md has the protocol side.

import type { SearchResult } from './protocol';

/** The field of the notice that marks a partial answer. */
export const INDEXING_FIELD = 'indexing';

/** The share of the run a partial answer covers ("40%"), or undefined for a whole one. */
export function partialShare(result: Pick<SearchResult, 'notices'>): string | undefined {
  return result.notices?.find((n) => n.field === INDEXING_FIELD)?.value;
}

/**
 * Asks a search again once when the indexing it was partial for ends. `partial` is
 * called after each answer shown (with whether it was partial); `indexed` when the
 * indexing progress ends. `indexingDone` asks the server (run/info) whether the first
 * index is done already; `again` asks the search shown again. A whole answer shown
 * after a partial one (a new search) cancels the wait.
 */
export class PartialRefresh {
  private pending = false;
  private generation = 0;

  constructor(
    private readonly indexingDone: () => Promise<boolean>,
    private readonly again: () => Promise<void>,
  ) {}

  /** Whether a partial answer waits for the end of indexing. */
  get waiting(): boolean {
    return this.pending;
  }

  /** After an answer is shown: a partial one waits for the rest, or gets it now when indexing is already done. */
  async shown(partial: boolean): Promise<void> {
    this.pending = partial;
    const gen = ++this.generation;
    if (!partial) return;
    let done = false;
    try {
      done = await this.indexingDone();
    } catch {
      done = false; // the progress's end will come
    }
    if (done && this.pending && gen === this.generation) await this.fire();
  }

  /** The indexing progress ended: a partial answer shown is asked again. */
  async indexed(): Promise<void> {
    if (this.pending) await this.fire();
  }

  private async fire(): Promise<void> {
    this.pending = false;
    await this.again();
  }
}
