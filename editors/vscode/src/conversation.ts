// A conversation in time order, as text: what the Show Conversation document holds
// (one block a record: a header `time · agent · level · conversation`, then the
// record's lines), the time between records where it is long, and where each block
// leads in the agent's file. Pure; conversationView.ts shows it in VS Code.

import type { ConversationSummary, RecordsParams, WireLocation, WireRecord } from './protocol';

/** The URI scheme of the conversation documents. */
export const CONVERSATION_SCHEME = 'runls-conversation';

/** The language of the conversation documents (level colours, Outline). */
export const CONVERSATION_LANGUAGE = 'runls-conversation';

/** Records asked for a page (run/records' default); runls.conversation.pageSize changes it. */
export const PAGE = 1000;

/**
 * A gap of at least this long between two records is written between their blocks:
 * a minute is longer than an agent takes between the steps of one exchange, so the
 * line marks where the conversation waited (a tool, a person, another agent).
 */
export const GAP_MS = 60_000;

/**
 * What a conversation document lists: run/records' filters (no cursor, no limit). An
 * empty `conversation` lists every record of the episode (the episode view: a record
 * written without the conversation field belongs to no conversation).
 */
export interface ConversationQuery {
  episode: string;
  conversation: string;
  agent?: string;
  minLevel?: string;
  /** yyyy-MM-dd HH:mm:ss, inclusive. */
  from?: string;
  to?: string;
}

const FILTER_KEYS = ['agent', 'minLevel', 'from', 'to'] as const;

/** Where a block of the document starts and ends, and the record it shows. */
export interface Block {
  /** 0-based lines of the document: the header, and the block's last line. */
  header: number;
  last: number;
  location: WireLocation;
  /** What the Outline and the filters read of the record. */
  time: string | null;
  level: string | null;
  agent: string;
  conversation: string | null;
  /** The record's first line of text. */
  first: string;
}

export interface Rendered {
  text: string;
  blocks: Block[];
}

/**
 * The document's URI (as a string) for a query. The path only names the tab: the
 * episode, the conversation and, for a filtered view, its filters in words, so that
 * the filtered and the unfiltered tab of one conversation read differently. The query
 * itself travels as base64url JSON in the URI's query, because vscode.Uri decodes
 * percent escapes in the path and the query, so an id holding `/`, `%`, `&` or `#`
 * would not come back whole from either.
 */
export function conversationUri(q: ConversationQuery): string {
  const shown = (v: string) => v.replace(/[/\\%?#]/g, '_');
  const query: ConversationQuery = { episode: q.episode, conversation: q.conversation };
  for (const k of FILTER_KEYS) {
    const v = q[k];
    if (v) query[k] = v;
  }
  const packed = Buffer.from(JSON.stringify(query), 'utf8').toString('base64url');
  const filters = filterWords(q);
  const name = (q.conversation || 'all records') + (filters.length > 0 ? ` (${filters.join(', ')})` : '');
  return `${CONVERSATION_SCHEME}:/${shown(q.episode)}/${shown(name)}?q=${packed}`;
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
  for (const k of FILTER_KEYS) {
    if (typeof o[k] === 'string' && o[k]) q[k] = o[k] as string;
  }
  return q;
}

/** The filters of a query as short words for a tab's title: `ERROR+`, `alice`, `18:00:00–18:10:00`. */
export function filterWords(q: ConversationQuery): string[] {
  const out: string[] = [];
  if (q.minLevel) out.push(`${q.minLevel}+`);
  if (q.agent) out.push(q.agent);
  if (q.from || q.to) out.push(`${clock(q.from) ?? '…'}–${clock(q.to) ?? '…'}`);
  return out;
}

function clock(t: string | undefined): string | undefined {
  return t ? t.slice(11, 19) || t : undefined;
}

/** The run/records params of a page: after or before `cursor`, or the one `at` a record. */
export function recordsParams(q: ConversationQuery, page: { cursor?: string; at?: WireLocation; limit?: number } = {}): RecordsParams {
  return {
    episode: q.episode,
    conversation: q.conversation,
    agent: q.agent,
    minLevel: q.minLevel,
    from: q.from,
    to: q.to,
    at: page.at,
    limit: page.limit ?? PAGE,
    cursor: page.cursor,
  };
}

/**
 * The index in `records` of the record at a location: the one whose file is the
 * location's and whose lines hold its first line (a continuation line means the
 * record that holds it, as spec §13 says for `at`); -1 when none is loaded.
 */
export function recordIndexAt(records: WireRecord[], at: WireLocation): number {
  const line = at.range.start.line;
  return records.findIndex(
    (r) => sameUri(r.location.uri, at.uri) && r.location.range.start.line <= line && line <= r.location.range.end.line,
  );
}

/** Two file URIs alike once their percent escapes are read (VS Code and the server escape differently). */
export function sameUri(a: string, b: string): boolean {
  if (a === b) return true;
  const norm = (u: string) => {
    try {
      return decodeURIComponent(u).replace(/^file:\/\/\/([a-zA-Z]):/, (_m, d: string) => `file:///${d.toLowerCase()}:`);
    } catch {
      return u;
    }
  };
  return norm(a) === norm(b);
}

/** The header of a record's block; a history record has no level, so none is written. */
export function header(r: WireRecord): string {
  return [r.time ?? '(no time)', r.agent, ...(r.level ? [r.level] : []), r.conversation ?? '(none)'].join(' · ');
}

/** The filters of a query, in words. */
export function filtersLabel(q: ConversationQuery): string {
  const level = q.minLevel ? `${q.minLevel} and up (records without a level left out)` : 'all levels';
  const agent = q.agent ? `agent ${q.agent}` : 'all agents';
  const window = q.from || q.to ? `from ${q.from ?? 'the start'} to ${q.to ?? 'the end'}` : q.conversation ? 'whole conversation' : 'whole episode';
  return `${level} · ${agent} · ${window}`;
}

/** What the lines around the blocks say when the list goes on past what is loaded. */
export const EARLIER_LINE = '… earlier records: scroll up to load them, or run "runls: Load Earlier Records".';
export const MORE_LINE = '… more records: scroll to the end, or run "runls: Load More Records".';

/**
 * The document for the records loaded so far: a summary line, a blank line, then the
 * blocks; `earlier` (records come before them) puts the line that says so above the
 * blocks, `more` (the list goes on) ends it with the line that says how to load more.
 */
export function render(q: ConversationQuery, records: WireRecord[], more: boolean, earlier = false): Rendered {
  const n = `${earlier ? '…' : ''}${records.length}${more ? '+' : ''}`;
  const one = records.length === 1 && !more && !earlier;
  const lines: string[] = [
    `runls: ${q.episode} · ${q.conversation || 'all records'} · ${n} record${one ? '' : 's'} · ${filtersLabel(q)}`,
    '',
  ];
  if (earlier) lines.push(EARLIER_LINE, '');
  const blocks: Block[] = [];
  let prev: number | undefined;
  for (const r of records) {
    const t = timeMs(r.time);
    if (prev !== undefined && t !== undefined && t - prev >= GAP_MS) lines.push(`⋯ ${duration(t - prev)} later`);
    if (t !== undefined) prev = t;
    const start = lines.length;
    lines.push(header(r));
    for (const l of r.text.split('\n')) lines.push(`  ${l}`);
    blocks.push({ header: start, last: lines.length - 1, location: r.location, time: r.time, level: r.level, agent: r.agent, conversation: r.conversation, first: r.text.split('\n', 1)[0] });
  }
  if (records.length === 0) lines.push(`No records (of this ${q.conversation ? 'conversation' : 'episode'}, with these filters).`);
  if (more) lines.push('', MORE_LINE);
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

/** Where the cursor of a record file is: its record's episode, conversation and time. */
export interface RecordPlace {
  episode: string;
  /** The record's conversation as written (`-` outside any); "" for a record without the field. */
  conversation: string;
  /** The record's time as written; null for a line before the file's first record. */
  time: string | null;
  /** The 0-based line of the record's first line. */
  line: number;
}

/**
 * The episode, conversation and time of the record that holds a line of a record
 * file: the episode from the file's path within the run folder, the rest from the
 * nearest record header at or above `line` (a continuation line belongs to the record
 * above). Undefined for a file outside an episode folder.
 */
export function recordContext(relPath: string, lines: (n: number) => string, line: number): RecordPlace | undefined {
  const ep = /(?:^|\/)(episode-\d+)\//.exec(relPath.replace(/\\/g, '/'));
  if (!ep) return undefined;
  const head = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[,.]\d{3})?) (?:(?:TRACE|DEBUG|INFO|WARN|ERROR) +)?\[[^\]]*\] (?:\[([^\]]+)\] )?/;
  for (let n = line; n >= 0; n--) {
    const text = lines(n);
    if (text.startsWith('  ')) continue;
    const m = head.exec(text);
    if (!m) continue;
    return { episode: ep[1], conversation: m[2] ?? '', time: m[1], line: n };
  }
  return { episode: ep[1], conversation: '', time: null, line: 0 };
}

/** The `yyyy-MM-dd` of a record time, or undefined. */
export function dayOf(time: string | null | undefined): string | undefined {
  const m = time ? /^(\d{4}-\d\d-\d\d)[ T]/.exec(time) : null;
  return m ? m[1] : undefined;
}

/** A record time to the second (`yyyy-MM-dd HH:mm:ss`), its milliseconds dropped, moved by `deltaMs`. */
export function secondOf(time: string, deltaMs = 0): string | undefined {
  const ms = timeMs(time);
  if (ms === undefined) return undefined;
  return new Date(Math.floor((ms + deltaMs) / 1000) * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * A time bound as typed: `yyyy-MM-dd HH:mm[:ss]` (or with `T`), or `HH:mm[:ss]` on
 * `day` (the episode's day: the record's). Seconds left out are :00 for a start and
 * :59 for an end, so `to 18:10` keeps the records of 18:10. "" is no bound. Returns
 * the bound as run/records and run/search take it, or an error in words.
 */
export function parseTimeBound(input: string, day: string | undefined, end: boolean): { value: string } | { error: string } {
  const v = input.trim();
  if (v === '') return { value: '' };
  const m = /^(?:(\d{4}-\d\d-\d\d)[ T_])?(\d{1,2}):(\d\d)(?::(\d\d))?$/.exec(v);
  if (!m) return { error: 'HH:mm[:ss], or yyyy-MM-dd HH:mm[:ss]' };
  const date = m[1] ?? day;
  if (!date) return { error: 'no day to put the time on: give yyyy-MM-dd HH:mm[:ss]' };
  const [h, min, sec] = [Number(m[2]), Number(m[3]), m[4] === undefined ? (end ? 59 : 0) : Number(m[4])];
  if (h > 23 || min > 59 || sec > 59) return { error: `${v} is not a time of day` };
  const two = (n: number) => String(n).padStart(2, '0');
  return { value: `${date} ${two(h)}:${two(min)}:${two(sec)}` };
}
