// run/search results as QuickPick items, and back to the location to open. Pure:
// the extension wraps these plain objects into vscode types.

import type { SearchItem, WireLocation } from './protocol';

/** The fields of vscode.QuickPickItem this module fills, plus the evidence behind it. */
export interface EvidencePick {
  label: string;
  description: string;
  detail: string;
  /** Keeps VS Code from hiding items whose label does not match the input box. */
  alwaysShow: true;
  item: SearchItem;
}

/** The longest label shown; the whole piece is in the file the item opens. */
export const MAX_LABEL_CHARS = 160;

const READING_ICON: Record<string, string> = {
  note: '$(note)',
  told: '$(arrow-right)',
  said: '$(comment)',
};

/**
 * Turns ranked evidence into QuickPick items, keeping the server's order. `rootUri`
 * (from run/info or the workspace folder) makes file paths relative to the run.
 */
export function toPicks(items: SearchItem[], rootUri?: string): EvidencePick[] {
  return items.map((item, i) => {
    const icon = READING_ICON[item.reading] ?? READING_ICON.note;
    const where = `${relativePath(item.location.uri, rootUri)}:${item.location.range.start.line + 1}`;
    const conv = item.conversation === null || item.conversation === undefined ? '' : ` · ${item.conversation}`;
    // The label row truncates its description behind a long text, so who/when/where
    // go on the detail row, which has the width to itself.
    return {
      label: `${icon} ${escapeIcons(shorten(item.text, MAX_LABEL_CHARS))}`,
      description: '',
      detail: `#${i + 1}  ${item.agent} · ${item.episode}${conv}  ·  ${where}  ·  score ${item.score.toFixed(2)}  ·  ${item.reading}`,
      alwaysShow: true,
      item,
    };
  });
}

/** Where choosing a pick goes: the file and the evidence's range, to select and reveal. */
export function pickLocation(pick: EvidencePick): WireLocation {
  return pick.item.location;
}

/** The QuickPick's title; the query lives here because a non-empty `value` would re-sort the items. */
export function pickTitle(query: string, count: number, context: string): string {
  const n = count === 1 ? '1 piece' : `${count} pieces`;
  return `runls: "${shorten(query, 60)}": ${n} of evidence${context ? ` (${context})` : ''}`;
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

/** Shortens `text` to at most `max` UTF-16 units with an ellipsis, never splitting a surrogate pair. */
export function shorten(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  if (oneLine.length <= max) return oneLine;
  let cut = max - 1;
  const code = oneLine.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  return oneLine.slice(0, cut) + '…';
}

/** Keeps `$(name)` in evidence text from rendering as an icon. */
export function escapeIcons(text: string): string {
  return text.replace(/\$\(/g, '\\$(');
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
