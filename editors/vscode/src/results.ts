// What the results view shows of a run/search result: one row per piece (its rank,
// text with the query's words highlighted, time, level, who and where), the sentences
// for what the filters hid and for request values the run lacks, each with the action
// that widens the search, and whether "Load more" can ask for more. Pure: the view
// (resultsView.ts) wraps these plain objects into vscode types.

import type { Hidden, Notice, SearchItem, SearchResult } from './protocol';

/** The longest text shown in a row; the whole piece is in the file the row opens. */
export const MAX_LABEL_CHARS = 160;

/** The most pieces a request may ask for (spec §5), and how many more "Load more" asks. */
export const MAX_TOP_K = 1000;

export interface EvidenceRow {
  /** "#1  episode-2 · bob 18:01:02  <text>", shortened to one line (the clock time when the piece has one). */
  label: string;
  /** [start, end) ranges of `label` to highlight: the query's words (item.matches). */
  highlights: Array<[number, number]>;
  /** time level · [conversation] · file:line */
  description: string;
  /** The codicon of the row: the record's level, or what the piece is. */
  icon: string;
  /** Markdown: the whole text and every field. */
  tooltip: string;
  item: SearchItem;
  /** Its place in the server's ranking, 1-based. */
  rank: number;
}

const LEVEL_ICON: Record<string, string> = {
  ERROR: 'error',
  WARN: 'warning',
  INFO: 'info',
};

const READING_ICON: Record<string, string> = {
  note: 'note',
  told: 'arrow-right',
  said: 'comment',
};

/** The order of the rows: the server's ranking, or the records' time (oldest first). */
export type RowOrder = 'rank' | 'time';

/**
 * The rows of a result, in the server's order or in time order (pieces without a
 * time last, in rank order); `rootUri` makes paths relative to the run. Each row
 * keeps its rank.
 */
export function evidenceRows(items: SearchItem[], rootUri?: string, order: RowOrder = 'rank'): EvidenceRow[] {
  const rows = items.map((item, i) => {
    // Where the piece is from leads (episode · agent), then the clock time: the
    // sidebar is narrow and cuts the description; the whole time and level follow in it.
    const clock = item.time && item.time.length >= 19 ? ` ${item.time.slice(11, 19)}` : '';
    const prefix = `#${i + 1}  ${item.episode} · ${item.agent}${clock}  `;
    const { text, ranges } = shortenWithRanges(item.text, item.matches ?? [], MAX_LABEL_CHARS);
    const where = `${relativePath(item.location.uri, rootUri)}:${item.location.range.start.line + 1}`;
    const when = [item.time, item.level].filter((s): s is string => !!s).join(' ');
    const description = [when, item.conversation ? `[${item.conversation}]` : '', where].filter((s) => s !== '').join('  ·  ');
    return {
      label: prefix + text,
      highlights: ranges.map(([s, e]) => [s + prefix.length, e + prefix.length] as [number, number]),
      description,
      icon: (item.level && LEVEL_ICON[item.level]) ?? READING_ICON[item.reading] ?? 'note',
      tooltip: tooltipOf(item, i + 1, where),
      item,
      rank: i + 1,
    };
  });
  if (order === 'time') rows.sort(byTime);
  return rows;
}

/** Oldest first (times compared as written, `,` and `.` alike); no time last; ties by rank. */
function byTime(a: EvidenceRow, b: EvidenceRow): number {
  const ta = a.item.time?.replace(',', '.');
  const tb = b.item.time?.replace(',', '.');
  if (ta && tb && ta !== tb) return ta < tb ? -1 : 1;
  if (!ta !== !tb) return ta ? -1 : 1;
  return a.rank - b.rank;
}

function tooltipOf(item: SearchItem, rank: number, where: string): string {
  const fields = [
    `#${rank} · score ${item.score.toFixed(2)} · ${item.reading}`,
    [item.time, item.level].filter(Boolean).join(' '),
    [item.agent, item.episode, item.conversation ?? ''].filter(Boolean).join(' · '),
    where,
  ].filter((s) => s !== '');
  return `${escapeMarkdown(item.text)}\n\n${fields.map(escapeMarkdown).join('  \n')}`;
}

/**
 * Folds white space runs to one space (a row is one line) and cuts the text to `max`
 * UTF-16 units with an ellipsis, never inside a surrogate pair, carrying the ranges
 * over: each range is moved to where its characters went, and cut at the ellipsis.
 */
export function shortenWithRanges(text: string, ranges: Array<[number, number]>, max: number): { text: string; ranges: Array<[number, number]> } {
  const at: number[] = new Array(text.length + 1); // at[i]: where unit i of text went
  let out = '';
  let space = false;
  for (let i = 0; i < text.length; i++) {
    at[i] = out.length;
    if (/\s/.test(text[i])) {
      space = out.length > 0;
      continue;
    }
    if (space) {
      out += ' ';
      at[i] = out.length;
      space = false;
    }
    out += text[i];
  }
  at[text.length] = out.length;
  let cut = out.length;
  if (out.length > max) {
    cut = max - 1;
    const code = out.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut--;
    out = out.slice(0, cut) + '…';
  }
  const moved: Array<[number, number]> = [];
  for (const [s, e] of ranges) {
    if (s < 0 || e > text.length || s >= e) continue;
    const ms = at[s];
    const me = Math.min(at[e], cut);
    if (ms < me) moved.push([ms, me]);
  }
  return { text: out, ranges: moved };
}

/** Shortens `text` to at most `max` UTF-16 units with an ellipsis, never splitting a surrogate pair. */
export function shorten(text: string, max: number): string {
  return shortenWithRanges(text, [], max).text;
}

/** How a sentence of the view widens the search when its action is run. */
export type Widening =
  | { kind: 'allConversations' }
  | { kind: 'scopeRun' }
  | { kind: 'pickContext' }
  | { kind: 'agent'; value: string } // '' drops the agent
  | { kind: 'pickEpisode' }
  | { kind: 'pickConversation' }
  | { kind: 'again' }; // the same query with the context now set

export interface Sentence {
  /** What the filters hid, or what the run does not hold, in words. */
  text: string;
  /** The action's title, and what it does; none when no request shows them. */
  action?: { title: string; widening: Widening };
  /** It says the answer is partial (the run still being indexed). */
  partial?: boolean;
}

/** The context a result was asked with, as the sentences name it. */
export interface AskedContext {
  agent: string;
  episode: string;
  conversation: string;
}

/**
 * The sentences for a result's notices, then its hidden counts (spec §12), in the
 * order of the server's reasons, each with the action that would show what it names.
 */
export function sentences(result: Pick<SearchResult, 'hidden' | 'notices'>, asked: AskedContext): Sentence[] {
  const out: Sentence[] = [];
  for (const n of result.notices ?? []) out.push(noticeSentence(n));
  const h: Hidden = result.hidden ?? {};
  const ep = asked.episode || 'the current episode';
  const more = (n: number) => `${n} more`;
  if (h.scope) {
    out.push({ text: `${more(h.scope)} outside ${ep}`, action: { title: 'Search the whole run', widening: { kind: 'scopeRun' } } });
  }
  if (h.noContext) {
    out.push({
      text: `${more(h.noContext)} in record files, which need an episode and a conversation`,
      action: { title: 'Pick the chat context', widening: { kind: 'pickContext' } },
    });
  }
  if (h.unfielded) {
    out.push({ text: `${more(h.unfielded)} without the conversation field in ${ep} (evidence only from another episode)` });
  }
  if (h.otherConversation) {
    out.push({
      text: `${more(h.otherConversation)} in other conversations of ${ep}`,
      action: { title: 'Search all conversations', widening: { kind: 'allConversations' } },
    });
  }
  return out;
}

function noticeSentence(n: Notice): Sentence {
  switch (n.field) {
    case 'agent':
      return n.suggestion
        ? { text: n.message, action: { title: `Search ${n.suggestion}`, widening: { kind: 'agent', value: n.suggestion } } }
        : { text: n.message, action: { title: 'Search all agents', widening: { kind: 'agent', value: '' } } };
    case 'episode':
      return { text: n.message, action: { title: 'Pick the episode', widening: { kind: 'pickEpisode' } } };
    case 'conversation':
      return { text: n.message, action: { title: 'Pick the conversation', widening: { kind: 'pickConversation' } } };
    case 'indexing':
      // The answer is made from part of the run (spec §12): the view searches again
      // when indexing ends (partial.ts), and says so.
      return { text: `Partial: made from the ${n.value} of the run indexed so far; searched again when indexing ends`, partial: true };
  }
  return { text: n.message };
}

/** How many pieces "Load more" asks for after `shown` of `asked`, or undefined when there are no more. */
export function nextTopK(asked: number, shown: number, page: number): number | undefined {
  if (shown < asked || asked >= MAX_TOP_K) return undefined; // the server had no more
  return Math.min(asked + Math.max(page, 1), MAX_TOP_K);
}

/**
 * The view's message: the query, the count and the context (and the order, when by
 * time); a partial answer (`partial`: the share of the run indexed) says so first.
 */
export function resultsMessage(query: string, count: number, context: string, order: RowOrder = 'rank', partial?: string): string {
  const n = count === 1 ? '1 piece' : `${count} pieces`;
  const lead = partial === undefined ? '' : `Partial (${partial} indexed): `;
  return `${lead}"${shorten(query, 60)}": ${n} of evidence${context ? ` (${context})` : ''}${order === 'time' ? ', in time order' : ''}`;
}

/** The view's title: Evidence, with (stale) and (partial) when the rows are. */
export function resultsTitle(stale: boolean, partial: boolean): string {
  const marks = [stale ? 'stale' : '', partial ? 'partial' : ''].filter((m) => m !== '');
  return marks.length === 0 ? 'Evidence' : `Evidence (${marks.join(', ')})`;
}

/**
 * The sentence that says a result was asked in another context than the one now
 * set (the pickers or settings changed since), with the action that asks again.
 */
export function staleSentence(askedIn: string, now: string): Sentence | undefined {
  if (askedIn === now) return undefined;
  return {
    text: `Stale: asked in ${askedIn}; the context is now ${now}`,
    action: { title: 'Search again', widening: { kind: 'again' } },
  };
}

/** The path of `uri` relative to `rootUri` when it lies below it, else the URI's path. */
export function relativePath(uri: string, rootUri?: string): string {
  const path = uriPath(uri);
  if (rootUri) {
    const root = uriPath(rootUri).replace(/\/+$/, '');
    if (path.startsWith(root + '/')) return path.slice(root.length + 1);
  }
  return path;
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~$]/g, '\\$&');
}

function uriPath(uri: string): string {
  const m = /^[a-zA-Z][\w+.-]*:\/\/[^/]*(\/.*)?$/.exec(uri);
  const raw = m ? (m[1] ?? '/') : uri;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
