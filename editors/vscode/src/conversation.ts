// A conversation in time order, as text: what the Show Conversation document holds
// (one block a record: a header `time · agent · level · conversation`, then the
// record's lines), the time between records where it is long, and where each block
// leads in the agent's file. Pure; conversationView.ts shows it in VS Code.

import type { ConversationSummary, RecordsParams, WireLocation, WireRecord } from './protocol';

/** The URI scheme of the conversation documents. */
export const CONVERSATION_SCHEME = 'runls-conversation';

/** Records asked for a page (run/records' default). */
export const PAGE = 1000;

/**
 * A gap of at least this long between two records is written between their blocks:
 * a minute is longer than an agent takes between the steps of one exchange, so the
 * line marks where the conversation waited (a tool, a person, another agent).
 */
export const GAP_MS = 60_000;

/** What a conversation document lists: run/records' filters (no cursor, no limit). */
export interface ConversationQuery {
  episode: string;
  conversation: string;
  minLevel?: string;
  /** yyyy-MM-dd HH:mm:ss, inclusive. */
  from?: string;
  to?: string;
}

/** Where a block of the document starts and ends, and the record it shows. */
export interface Block {
  /** 0-based lines of the document: the header, and the block's last line. */
  header: number;
  last: number;
  location: WireLocation;
}

export interface Rendered {
  text: string;
  blocks: Block[];
}

/**
 * The document's URI (as a string) for a query. The path (episode/conversation) only
 * names the tab; the query itself travels as base64url JSON in the URI's query,
 * because vscode.Uri decodes percent escapes in the path and the query, so an id
 * holding `/`, `%`, `&` or `#` would not come back whole from either.
 */
export function conversationUri(q: ConversationQuery): string {
  const shown = (v: string) => v.replace(/[/\\%?#]/g, '_');
  const query: ConversationQuery = { episode: q.episode, conversation: q.conversation };
  for (const k of ['minLevel', 'from', 'to'] as const) {
    const v = q[k];
    if (v) query[k] = v;
  }
  const packed = Buffer.from(JSON.stringify(query), 'utf8').toString('base64url');
  return `${CONVERSATION_SCHEME}:/${shown(q.episode)}/${shown(q.conversation)}?q=${packed}`;
}

/** The query of a document's URI query part (decoded or not), or undefined. */
export function parseConversationUri(query: string): ConversationQuery | undefined {
  const m = /(?:^|&)q=([A-Za-z0-9_-]+)(?:&|$)/.exec(query);
  if (!m) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.episode !== 'string' || typeof o.conversation !== 'string') return undefined;
  const q: ConversationQuery = { episode: o.episode, conversation: o.conversation };
  for (const k of ['minLevel', 'from', 'to'] as const) {
    if (typeof o[k] === 'string' && o[k]) q[k] = o[k] as string;
  }
  return q;
}

export function recordsParams(q: ConversationQuery, cursor?: string): RecordsParams {
  return { episode: q.episode, conversation: q.conversation, minLevel: q.minLevel, from: q.from, to: q.to, limit: PAGE, cursor };
}

/** The header of a record's block; a history record has no level, so none is written. */
export function header(r: WireRecord): string {
  return [r.time ?? '(no time)', r.agent, ...(r.level ? [r.level] : []), r.conversation ?? '(none)'].join(' · ');
}

/** The filters of a query, in words. */
export function filtersLabel(q: ConversationQuery): string {
  const level = q.minLevel ? `${q.minLevel} and up (history records kept)` : 'all levels';
  const window = q.from || q.to ? `from ${q.from ?? 'the start'} to ${q.to ?? 'the end'}` : 'whole conversation';
  return `${level} · ${window}`;
}

/**
 * The document for the records loaded so far: a summary line, a blank line, then the
 * blocks; `more` (the list goes on) ends it with the line that says how to load more.
 */
export function render(q: ConversationQuery, records: WireRecord[], more: boolean): Rendered {
  const lines: string[] = [
    `runls: ${q.episode} · ${q.conversation} · ${records.length}${more ? '+' : ''} record${records.length === 1 && !more ? '' : 's'} · ${filtersLabel(q)}`,
    '',
  ];
  const blocks: Block[] = [];
  let prev: number | undefined;
  for (const r of records) {
    const t = timeMs(r.time);
    if (prev !== undefined && t !== undefined && t - prev >= GAP_MS) lines.push(`⋯ ${duration(t - prev)} later`);
    if (t !== undefined) prev = t;
    const start = lines.length;
    lines.push(header(r));
    for (const l of r.text.split('\n')) lines.push(`  ${l}`);
    blocks.push({ header: start, last: lines.length - 1, location: r.location });
  }
  if (records.length === 0) lines.push('No records (of this conversation, with these filters).');
  if (more) lines.push('', `… more records: scroll to the end, or run "runls: Load More Records".`);
  return { text: lines.join('\n') + '\n', blocks };
}

/** The block that holds a line of the document (its header or its text), if any. */
export function blockAt(blocks: Block[], line: number): Block | undefined {
  let lo = 0;
  let hi = blocks.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (blocks[m].header <= line) lo = m + 1;
    else hi = m;
  }
  const b = blocks[lo - 1];
  return b !== undefined && line <= b.last ? b : undefined;
}

/** A record time as written (`,SSS`, `.SSS` or none) in ms since an epoch of its own (UTC as written). */
export function timeMs(t: string | null): number | undefined {
  const m = t === null ? null : /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:[,.](\d{3}))?/.exec(t);
  if (!m) return undefined;
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], m[7] ? +m[7] : 0);
}

/** A gap in words: "1 min 5 s", "2 h 3 min", "3 d 4 h". */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return s % 60 ? `${min} min ${s % 60} s` : `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** A QuickPick row of a conversation: its agents, record count, time span and line. */
export interface SummaryPick {
  label: string;
  description: string;
  detail: string;
  conversation: string;
}

export function summaryPicks(list: ConversationSummary[]): SummaryPick[] {
  return list.map((s) => ({
    label: `$(comment-discussion) ${s.conversation}`,
    description: `${s.agents.join(', ')} · ${s.records} record${s.records === 1 ? '' : 's'} · ${span(s.first, s.last)}`,
    detail: s.line,
    conversation: s.conversation,
  }));
}

/** A time span, the end's date left out when it is the start's. */
export function span(first: string, last: string): string {
  if (first === last) return first;
  const sameDay = first.slice(0, 10) === last.slice(0, 10);
  return `${first} – ${sameDay ? last.slice(11) : last}`;
}

/**
 * The episode and conversation of a record line of a record file: the episode from
 * the file's path within the run folder, the conversation from the nearest record
 * header at or above `line` (a continuation line belongs to the record above).
 */
export function recordContext(relPath: string, lines: (n: number) => string, line: number): { episode: string; conversation: string } | undefined {
  const ep = /(?:^|\/)(episode-\d+)\//.exec(relPath.replace(/\\/g, '/'));
  if (!ep) return undefined;
  const head = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[,.]\d{3})? (?:(?:TRACE|DEBUG|INFO|WARN|ERROR) +)?\[[^\]]*\] (?:\[([^\]]+)\] )?/;
  for (let n = line; n >= 0; n--) {
    const text = lines(n);
    if (text.startsWith('  ')) continue;
    const m = head.exec(text);
    if (!m) continue;
    return m[1] === undefined ? undefined : { episode: ep[1], conversation: m[1] };
  }
  return undefined;
}
