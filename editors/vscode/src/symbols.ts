// Workspace symbols (Ctrl+T) that keep the server's BM25 order in VS Code's picker.
//
// What VS Code 1.100 does with workspace symbols (symbolsQuickAccess.ts):
//  1. It sends providers only the text before the first space of what was typed.
//  2. It keeps a symbol only if its `name` fuzzy-matches the typed text (or the first
//     word matches the name and the other words match "containerName • path").
//  3. It sorts by that fuzzy score, then by name (case-insensitive localeCompare).
// So the server's ranking would be re-sorted by where the letters happen to fall.
// The middleware gives every name the same start, the query as sent, which every
// symbol matches equally well (same fuzzy score), then a fixed-width rank, so VS
// Code's tie-break by name is the server's order.

/** What the middleware rewrites of a vscode.SymbolInformation. */
export interface NamedSymbol {
  name: string;
}

/**
 * Rewrites the names of the server's symbols, in the server's order, to
 * `<query> #<rank> <text>` (rank zero-padded to the width of the count). Returns the
 * same array. An empty query gets no prefix: VS Code then sorts by name alone.
 */
export function arrangeSymbols<T extends NamedSymbol>(query: string, symbols: T[]): T[] {
  const width = String(symbols.length).length;
  const prefix = query === '' ? '' : `${query} `;
  symbols.forEach((s, i) => {
    s.name = `${prefix}#${String(i + 1).padStart(width, '0')} ${s.name}`;
  });
  return symbols;
}

/** The piece text back from an arranged name (for tests and for display elsewhere). */
export function pieceText(query: string, name: string): string {
  const prefix = query === '' ? '' : `${query} `;
  const rest = name.startsWith(prefix) ? name.slice(prefix.length) : name;
  return rest.replace(/^#\d+ /, '');
}
