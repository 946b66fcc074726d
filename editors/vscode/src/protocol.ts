// The runls server's custom requests (spec §9) and the client-side code that sends
// them. It depends on nothing but a `sendRequest`, so the extension (through its
// LanguageClient) and the integration test (through a vscode-jsonrpc connection to
// the real server) run the same code.

/** LSP Position/Range/Location as they travel on the wire (0-based, UTF-16). */
export interface WirePosition {
  line: number;
  character: number;
}
export interface WireRange {
  start: WirePosition;
  end: WirePosition;
}
export interface WireLocation {
  uri: string;
  range: WireRange;
}

export type Reading = 'note' | 'told' | 'said';

/** One piece of evidence of a `run/search` result. */
export interface SearchItem {
  location: WireLocation;
  score: number;
  text: string;
  agent: string;
  episode: string;
  conversation: string | null;
  reading: Reading;
  /** The record's time as written, and its level (log files); null for notes. */
  time: string | null;
  level: string | null;
  /** UTF-16 ranges [start, end) of the query's terms within `text`. */
  matches: Array<[number, number]>;
}

/** What the request's rules kept out of the best `topK` pieces (spec §12); zero counts are absent. */
export interface Hidden {
  scope?: number;
  noContext?: number;
  unfielded?: number;
  otherConversation?: number;
}

/** A request value the run does not hold (spec §12). */
export interface Notice {
  field: string;
  value: string;
  message: string;
  suggestion: string | null;
}

export interface SearchResult {
  items: SearchItem[];
  hidden: Hidden;
  notices: Notice[];
}

/** The params of `run/search` (spec §5). Absent fields take the server's settings. */
export interface SearchParams {
  query?: string;
  turnMessage?: string;
  agent?: string;
  episode?: string;
  conversation?: string;
  scope?: 'run' | 'episode';
  topK?: number;
  /** yyyy-MM-dd HH:mm:ss, inclusive (spec §5 rev 3): only records within these bounds. */
  from?: string;
  to?: string;
  /** runls' own: records of the current episode from every conversation. */
  allConversations?: boolean;
}

export interface EpisodeInfo {
  episode: string;
  agents: string[];
  conversations: string[];
}

export interface RunInfo {
  root: string;
  agents: string[];
  episodes: EpisodeInfo[];
  indexing: { done: boolean; files: number; bytes: number };
}

/** The params of `run/records` (spec §13). */
export interface RecordsParams {
  episode: string;
  conversation?: string;
  agent?: string;
  minLevel?: string;
  from?: string;
  to?: string;
  /** The page that holds the record at this location (spec §13 rev 3). */
  at?: WireLocation;
  limit?: number;
  cursor?: string;
}

/** One record of a `run/records` page, whole. */
export interface WireRecord {
  location: WireLocation;
  time: string | null;
  level: string | null;
  state: string;
  conversation: string | null;
  agent: string;
  episode: string;
  /** Its evidence text, its lines joined with "\n". */
  text: string;
}

export interface RecordsResult {
  records: WireRecord[];
  /** null on the page that ends the list. */
  cursor: string | null;
  /** null on the page that starts the list (absent from a server before spec rev 3: null). */
  previousCursor: string | null;
  /** With `at`: the index in `records` of the record at that location (absent: not known). */
  atIndex?: number;
}

/** The params of `run/failures` (spec §9 rev 3; `maxRecords` and `pattern` are runls' own: docs/choices.md). */
export interface FailuresParams {
  episode?: string;
  agent?: string;
  minLevel?: string;
  /** At most this many locations a group (0–100; absent: 100). */
  maxRecords?: number;
  /** Only the group of this pattern. */
  pattern?: string;
}

/** A group of failures: records whose first lines read alike once numbers and ids are taken out. */
export interface FailureGroup {
  pattern: string;
  count: number;
  agents: string[];
  episodes: string[];
  first: string | null;
  last: string | null;
  records: WireLocation[];
}

export interface FailuresResult {
  groups: FailureGroup[];
}

/** A conversation of an episode as run/info with an episode describes it. */
export interface ConversationSummary {
  conversation: string;
  agents: string[];
  records: number;
  first: string;
  last: string;
  /** Its first told or said message's first line (else its first record's). */
  line: string;
}

/** What both LanguageClient and a vscode-jsonrpc MessageConnection provide. */
export interface RequestSender {
  sendRequest<R>(method: string, params: unknown, token?: unknown): Promise<R>;
}

export const SEARCH_METHOD = 'run/search';
export const INFO_METHOD = 'run/info';
export const RECORDS_METHOD = 'run/records';
export const FAILURES_METHOD = 'run/failures';

/** JSON-RPC "invalid params": the server names the bad field in the message. */
export const INVALID_PARAMS = -32602;

/** Sends `run/search` and checks the answer's shape, so a server bug reads as one. */
export async function search(sender: RequestSender, params: SearchParams, token?: unknown): Promise<SearchResult> {
  const result = await send(sender, SEARCH_METHOD, dropEmpty(params), token);
  return checkSearchResult(result);
}

/** Sends `run/info` (params `{}`). */
export async function info(sender: RequestSender, token?: unknown): Promise<RunInfo> {
  const result = await send(sender, INFO_METHOD, {}, token);
  return checkRunInfo(result);
}

/** Sends `run/records` and checks the answer's shape. */
export async function records(sender: RequestSender, params: RecordsParams, token?: unknown): Promise<RecordsResult> {
  const result = await send(sender, RECORDS_METHOD, dropEmpty(params), token);
  if (!isObject(result) || !Array.isArray(result.records)) {
    throw new Error(`run/records: unexpected result ${JSON.stringify(result)?.slice(0, 200)}`);
  }
  for (const r of result.records as unknown[]) {
    if (!isObject(r) || !isObject(r.location) || typeof r.location.uri !== 'string' || typeof r.text !== 'string') {
      throw new Error(`run/records: malformed record ${JSON.stringify(r)?.slice(0, 200)}`);
    }
  }
  const out: RecordsResult = {
    records: result.records as WireRecord[],
    cursor: typeof result.cursor === 'string' ? result.cursor : null,
    previousCursor: typeof result.previousCursor === 'string' ? result.previousCursor : null,
  };
  if (typeof result.atIndex === 'number' && result.atIndex >= 0 && result.atIndex < out.records.length) out.atIndex = result.atIndex;
  return out;
}

/** Sends `run/failures` and checks the answer's shape. */
export async function failures(sender: RequestSender, params: FailuresParams, token?: unknown): Promise<FailuresResult> {
  const result = await send(sender, FAILURES_METHOD, dropEmpty(params), token);
  if (!isObject(result) || !Array.isArray(result.groups)) {
    throw new Error(`run/failures: unexpected result ${JSON.stringify(result)?.slice(0, 200)}`);
  }
  for (const g of result.groups as unknown[]) {
    if (!isObject(g) || typeof g.pattern !== 'string' || typeof g.count !== 'number' || !Array.isArray(g.records)) {
      throw new Error(`run/failures: malformed group ${JSON.stringify(g)?.slice(0, 200)}`);
    }
    g.agents = Array.isArray(g.agents) ? g.agents : [];
    g.episodes = Array.isArray(g.episodes) ? g.episodes : [];
    g.first = typeof g.first === 'string' ? g.first : null;
    g.last = typeof g.last === 'string' ? g.last : null;
  }
  return { groups: result.groups as FailureGroup[] };
}

/**
 * The conversations of an episode: run/info with `{"episode"}` (runls' own
 * addition); an older server's answer has none, and gives [].
 */
export async function conversations(sender: RequestSender, episode: string, token?: unknown): Promise<ConversationSummary[]> {
  const result = await send(sender, INFO_METHOD, { episode }, token);
  checkRunInfo(result);
  const list = (result as { conversations?: unknown }).conversations;
  return Array.isArray(list) ? (list as ConversationSummary[]) : [];
}

/**
 * run/info once the server has indexed the run: the server answers at once, with
 * `indexing.done` false and partial lists while it indexes, so pickers built on it
 * ask again until it is done (or `timeoutMs` passed: then the partial answer).
 */
export async function infoWhenIndexed(
  sender: RequestSender,
  opts: { timeoutMs?: number; intervalMs?: number; sleep?: (ms: number) => Promise<void>; now?: () => number } = {},
): Promise<RunInfo> {
  const { timeoutMs = 30_000, intervalMs = 200 } = opts;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = opts.now ?? Date.now;
  const end = now() + timeoutMs;
  for (;;) {
    const r = await info(sender);
    if (r.indexing.done || now() >= end) return r;
    await sleep(intervalMs);
  }
}

/**
 * Drops fields that are undefined or "" so the server applies its settings for them
 * (spec §5: an empty string is the same as an absent field).
 */
export function dropEmpty<P extends object>(params: P): P {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    out[k] = v;
  }
  return out as P;
}

export function checkSearchResult(result: unknown): SearchResult {
  if (!isObject(result) || !Array.isArray(result.items)) {
    throw new Error(`run/search: unexpected result ${JSON.stringify(result)?.slice(0, 200)}`);
  }
  for (const item of result.items as unknown[]) {
    if (!isObject(item) || !isObject(item.location) || typeof item.location.uri !== 'string' ||
        !isObject(item.location.range) || typeof item.text !== 'string' || typeof item.score !== 'number') {
      throw new Error(`run/search: malformed item ${JSON.stringify(item)?.slice(0, 200)}`);
    }
    // An older server sends none of these: the view then shows what it has.
    item.time ??= null;
    item.level ??= null;
    if (!Array.isArray(item.matches)) item.matches = [];
  }
  if (!isObject(result.hidden)) result.hidden = {};
  if (!Array.isArray(result.notices)) result.notices = [];
  return result as unknown as SearchResult;
}

export function checkRunInfo(result: unknown): RunInfo {
  if (!isObject(result) || !Array.isArray(result.agents) || !Array.isArray(result.episodes)) {
    throw new Error(`run/info: unexpected result ${JSON.stringify(result)?.slice(0, 200)}`);
  }
  const r = result as unknown as RunInfo;
  for (const e of r.episodes) {
    e.agents ??= [];
    e.conversations ??= [];
  }
  r.indexing ??= { done: true, files: 0, bytes: 0 };
  return r;
}

/**
 * vscode-jsonrpc takes a last argument that is not a cancellation token as one more
 * parameter and would send `[params, undefined]`: pass the token only when there is one.
 */
function send(sender: RequestSender, method: string, params: object, token: unknown): Promise<unknown> {
  return token === undefined ? sender.sendRequest<unknown>(method, params) : sender.sendRequest<unknown>(method, params, token);
}

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null;
}
