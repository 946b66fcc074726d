// What the Failures view shows of a run/failures result (spec §9): a row a group (its
// count, its pattern, who and when), under it a row a record (where it is). The groups
// are listed without their records (`maxRecords: 0`: §9's whole answer is 370 KB on a
// 1 GB run, whose parse alone cost more than a search), and a group's records are
// fetched when it is expanded (`pattern`). Pure but for the request: the view
// (failuresView.ts) wraps these plain objects into vscode types.

import { failures } from './protocol';
import type { FailureGroup, FailuresParams, FailuresResult, RequestSender, WireLocation } from './protocol';
import { relativePath, shorten } from './results';
import { span } from './conversation';

/** The most groups run/failures answers (spec §9). */
export const MAX_GROUPS = 200;

/** The most locations a group lists (spec §9). */
export const MAX_RECORDS = 100;

/** The longest pattern shown in a row; the whole one is in the tooltip. */
export const MAX_PATTERN_CHARS = 160;

export interface FailureGroupRow {
  /** "12× Connection to <*> refused" */
  label: string;
  /** "alice, bob · episode-2, episode-3 · 2026-10-21 18:00:02 – 18:08:00" */
  description: string;
  tooltip: string;
  group: FailureGroup;
}

export interface FailureRecordRow {
  /** "episode-2/bob/bob.log:3" */
  label: string;
  location: WireLocation;
}

export function groupRows(result: FailuresResult): FailureGroupRow[] {
  return result.groups.map((g) => {
    const when = g.first && g.last ? span(g.first, g.last) : (g.first ?? g.last ?? '');
    const description = [g.agents.join(', '), g.episodes.join(', '), when].filter((s) => s !== '').join(' · ');
    const shown = g.count > MAX_RECORDS ? ` (the first ${MAX_RECORDS} listed)` : '';
    return {
      label: `${g.count}× ${shorten(g.pattern.replace(/\s+/g, ' ').trim(), MAX_PATTERN_CHARS)}`,
      description,
      tooltip: `${g.pattern}\n\n${g.count} record${g.count === 1 ? '' : 's'}${shown}\n${description}`,
      group: g,
    };
  });
}

export function recordRows(g: FailureGroup, rootUri?: string): FailureRecordRow[] {
  return g.records.map((location) => ({ label: `${relativePath(location.uri, rootUri)}:${location.range.start.line + 1}`, location }));
}

/** The groups as the view lists them: without their records. */
export function listGroups(sender: RequestSender, params: FailuresParams, token?: unknown): Promise<FailuresResult> {
  return failures(sender, { ...params, maxRecords: 0 }, token);
}

/**
 * A group's records: those it came with (a server that does not know `maxRecords`
 * answers them all), else fetched by its pattern with the list's params. undefined: the
 * run no longer has the group (it changed since the list was made).
 */
export async function groupRecords(sender: RequestSender, params: FailuresParams, g: FailureGroup, token?: unknown): Promise<WireLocation[] | undefined> {
  if (g.records.length > 0 || g.count === 0) return g.records;
  const res = await failures(sender, { ...params, maxRecords: undefined, pattern: g.pattern }, token);
  return res.groups.find((x) => x.pattern === g.pattern)?.records;
}

/** The view's message: how many groups and failures, and of what. */
export function failuresMessage(result: FailuresResult, params: FailuresParams): string {
  const n = result.groups.reduce((sum, g) => sum + g.count, 0);
  // run/failures answers at most 200 groups (spec §9): then these are the most frequent.
  const most = result.groups.length >= MAX_GROUPS ? ' (the most frequent)' : '';
  const groups = `${result.groups.length} group${result.groups.length === 1 ? '' : 's'}${most}`;
  const of = [params.episode || 'whole run', params.agent || 'all agents', `${params.minLevel || 'ERROR'} and up, and exceptions`].join(' · ');
  return `${groups}, ${n} record${n === 1 ? '' : 's'} (${of})`;
}
