// The runls results view: the last search's evidence in its own view, which stays as
// the Search view's results do. Rows in the server's order (rank, the query's words
// highlighted, time, level, who and where), the sentences for what the filters hid
// with the action that widens the search, and "Load more". Next/Previous Evidence walk
// the rows and open each in a preview tab with the piece selected.

import * as vscode from 'vscode';
import type { SearchItem, SearchResult } from './protocol';
import { partialShare } from './partial';
import { AskedContext, EvidenceRow, evidenceRows, nextTopK, resultsMessage, resultsTitle, RowOrder, Sentence, sentences, staleSentence, Widening } from './results';

export const RESULTS_VIEW = 'runls.results';
export const HAS_RESULTS = 'runls.hasResults';
export const OPEN_EVIDENCE_COMMAND = 'runls.openEvidence';
export const WIDEN_COMMAND = 'runls.widen';
export const LOAD_MORE_COMMAND = 'runls.loadMore';
export const SORT_BY_TIME_COMMAND = 'runls.sortEvidenceByTime';
export const SORT_BY_RANK_COMMAND = 'runls.sortEvidenceByRank';
/** Context keys: the rows are in time order; the rows were asked in another context than the one now set. */
export const BY_TIME = 'runls.evidenceByTime';
export const STALE = 'runls.evidenceStale';

/** A search as the view shows it. */
export interface ShownSearch {
  query: string;
  result: SearchResult;
  /** The context label ("alice · episode-2 · conv-1"), and its parts. */
  context: string;
  asked: AskedContext;
  /** How many pieces were asked for, and how many more "Load more" asks. */
  topK: number;
  page: number;
  allConversations: boolean;
  rootUri?: string;
  /** The time bound of a search before a record (spec §5 `to`), shown in the message. */
  before?: string;
  /** The episode and conversation a search before a record was asked in (the record's), over the settings'. */
  overrides?: { episode: string; conversation: string };
  /** The order the rows are shown in; time for a search before a record. */
  order?: RowOrder;
}

type Node =
  | { kind: 'sentence'; sentence: Sentence }
  | { kind: 'evidence'; row: EvidenceRow; index: number }
  | { kind: 'more'; topK: number };

export class ResultsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private nodes: Node[] = [];
  private rows: Array<Extract<Node, { kind: 'evidence' }>> = [];
  private current = -1;
  private shownSearch: ShownSearch | undefined;
  /** The context now set, when it is not the one the search shown was asked in. */
  private contextNow: string | undefined;
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Node>;
  private readonly disposables: vscode.Disposable[];

  constructor() {
    this.view = vscode.window.createTreeView(RESULTS_VIEW, { treeDataProvider: this });
    this.disposables = [
      this.view,
      this.changed,
      vscode.commands.registerCommand(OPEN_EVIDENCE_COMMAND, (index: unknown) => this.open(Number(index))),
      vscode.commands.registerCommand('runls.nextEvidence', () => this.step(1)),
      vscode.commands.registerCommand('runls.previousEvidence', () => this.step(-1)),
      vscode.commands.registerCommand(SORT_BY_TIME_COMMAND, () => this.setOrder('time')),
      vscode.commands.registerCommand(SORT_BY_RANK_COMMAND, () => this.setOrder('rank')),
    ];
    void vscode.commands.executeCommand('setContext', HAS_RESULTS, false);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  /** The search shown, if any. */
  get shown(): ShownSearch | undefined {
    return this.shownSearch;
  }

  /**
   * Shows a search. `keep` keeps the row that was current (Load more: the rows before
   * it are the same).
   */
  async show(s: ShownSearch, keep = false): Promise<void> {
    this.shownSearch = s;
    this.contextNow = undefined;
    if (!keep) this.current = -1;
    await this.draw();
  }

  /**
   * Says whether the search shown was asked in the context now set: when not, the
   * view marks it stale (its title, its message, a first row that searches again).
   */
  async contextChanged(labelNow: (s: ShownSearch) => string): Promise<void> {
    if (!this.shownSearch) return;
    const now = labelNow(this.shownSearch);
    const next = now === this.shownSearch.context ? undefined : now;
    if (next === this.contextNow) return;
    this.contextNow = next;
    await this.draw();
  }

  /** Rows in the server's ranking or in time order. */
  async setOrder(order: RowOrder): Promise<void> {
    if (!this.shownSearch) return;
    this.shownSearch = { ...this.shownSearch, order };
    this.current = -1;
    await this.draw();
  }

  private async draw(): Promise<void> {
    const s = this.shownSearch;
    if (!s) return;
    const order = s.order ?? 'rank';
    const stale = this.contextNow === undefined ? undefined : staleSentence(s.context, this.contextNow);
    const said = [...(stale ? [stale] : []), ...sentences(s.result, s.asked)].map((sentence): Node => ({ kind: 'sentence', sentence }));
    this.rows = evidenceRows(s.result.items, s.rootUri, order).map((row, index) => ({ kind: 'evidence', row, index }));
    const more = nextTopK(s.topK, s.result.items.length, s.page);
    this.nodes = [...said, ...this.rows, ...(more === undefined ? [] : [{ kind: 'more', topK: more } as Node])];
    if (this.current >= this.rows.length) this.current = -1;
    const scope = s.allConversations ? ', all conversations' : '';
    const before = s.before ? `, before ${s.before}` : '';
    const partial = partialShare(s.result);
    const message = resultsMessage(s.query, s.result.items.length, s.context + scope + before, order, partial);
    this.view.message = stale ? `Stale: ${message}` : message;
    this.view.title = resultsTitle(stale !== undefined, partial !== undefined);
    this.changed.fire(undefined);
    await vscode.commands.executeCommand('setContext', HAS_RESULTS, this.rows.length > 0);
    await vscode.commands.executeCommand('setContext', BY_TIME, order === 'time');
    await vscode.commands.executeCommand('setContext', STALE, stale !== undefined);
  }

  /** Brings the view to the front. */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${RESULTS_VIEW}.focus`);
  }

  getTreeItem(n: Node): vscode.TreeItem {
    switch (n.kind) {
      case 'evidence': {
        const r = n.row;
        const item = new vscode.TreeItem({ label: r.label, highlights: r.highlights });
        item.id = `evidence-${r.rank}`;
        item.description = r.description;
        item.tooltip = new vscode.MarkdownString(r.tooltip);
        item.iconPath = iconOf(r.icon);
        item.command = { command: OPEN_EVIDENCE_COMMAND, title: 'Open Evidence', arguments: [n.index] };
        item.contextValue = 'evidence';
        return item;
      }
      case 'sentence': {
        const item = new vscode.TreeItem(n.sentence.text);
        const stale = n.sentence.action?.widening.kind === 'again';
        const partial = n.sentence.partial === true;
        item.iconPath = partial
          ? new vscode.ThemeIcon('sync~spin')
          : new vscode.ThemeIcon(stale ? 'warning' : 'filter', stale ? new vscode.ThemeColor('problemsWarningIcon.foreground') : undefined);
        item.contextValue = stale ? 'stale' : partial ? 'partial' : 'hidden';
        if (n.sentence.action) {
          item.description = `→ ${n.sentence.action.title}`;
          item.tooltip = `${n.sentence.text}: ${n.sentence.action.title}`;
          item.command = { command: WIDEN_COMMAND, title: n.sentence.action.title, arguments: [n.sentence.action.widening] };
        }
        return item;
      }
      case 'more': {
        const item = new vscode.TreeItem('Load more');
        item.iconPath = new vscode.ThemeIcon('more');
        item.description = `the best ${n.topK}`;
        item.command = { command: LOAD_MORE_COMMAND, title: 'Load more', arguments: [n.topK] };
        return item;
      }
    }
  }

  getChildren(n?: Node): Node[] {
    return n === undefined ? this.nodes : [];
  }

  getParent(): undefined {
    return undefined;
  }

  /** Next (1) or previous (-1) evidence: selected in the view and opened in a preview tab. */
  private async step(delta: number): Promise<void> {
    const n = this.rows.length;
    if (n === 0) return;
    const next = this.current < 0 ? (delta > 0 ? 0 : n - 1) : (this.current + delta + n) % n;
    await this.open(next);
  }

  private async open(index: number): Promise<void> {
    const node = this.rows[index];
    if (node === undefined) return;
    this.current = index;
    if (this.view.visible) await this.view.reveal(node, { select: true, focus: false });
    await openEvidence(node.row.item);
  }
}

function iconOf(name: string): vscode.ThemeIcon {
  switch (name) {
    case 'error':
      return new vscode.ThemeIcon(name, new vscode.ThemeColor('problemsErrorIcon.foreground'));
    case 'warning':
      return new vscode.ThemeIcon(name, new vscode.ThemeColor('problemsWarningIcon.foreground'));
    case 'info':
      return new vscode.ThemeIcon(name, new vscode.ThemeColor('problemsInfoIcon.foreground'));
  }
  return new vscode.ThemeIcon(name);
}

/**
 * Opens a piece's file in a preview tab with the piece selected, the cursor at its start
 * and the line's start in view (the record's time and fields), then the piece.
 */
export async function openEvidence(item: SearchItem): Promise<void> {
  const r = item.location.range;
  const range = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
  try {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(item.location.uri));
    const editor = await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: false });
    editor.selection = new vscode.Selection(range.end, range.start);
    const lineStart = new vscode.Range(range.start.line, 0, range.start.line, 0);
    editor.revealRange(lineStart, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    editor.revealRange(new vscode.Range(range.start, range.start), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  } catch (e) {
    void vscode.window.showErrorMessage(`runls: cannot open ${item.location.uri}: ${e instanceof Error ? e.message : e}`);
  }
}

export type { Widening };
