// "runls: Show Conversation": a conversation's records in time order in a read-only
// document of its own scheme and language (conversation.ts makes its text). It opens
// at a record when it is shown from one (a file's record, an Evidence row, a failure):
// that record's block selected and in view, the page around it loaded (run/records
// `at`); pages load as the user scrolls to either end (or runs Load More / Load
// Earlier Records). Enter on a block, or Ctrl+click on its header, opens the record
// in the agent's file; the document is made again when the run's record files change,
// with the view kept on the record it showed.

import * as vscode from 'vscode';
import {
  Block,
  blockAt,
  CONVERSATION_SCHEME,
  ConversationQuery,
  conversationUri,
  dayOf,
  parseConversationUri,
  parseTimeBound,
  recordContext,
  recordIndexAt,
  recordsParams,
  render,
  RecordPlace,
  secondOf,
  summaryPicks,
} from './conversation';
import { episodePicks } from './context';
import { conversations, records, RequestSender, RunInfo, WireLocation, WireRecord } from './protocol';
import { shorten } from './results';

export const SHOW_CONVERSATION_COMMAND = 'runls.showConversation';
export const SHOW_CONVERSATION_AT_COMMAND = 'runls.showConversationAt';
export const OPEN_RECORD_COMMAND = 'runls.openRecord';
export const LOAD_MORE_RECORDS_COMMAND = 'runls.loadMoreRecords';
export const LOAD_EARLIER_RECORDS_COMMAND = 'runls.loadEarlierRecords';
export const FILTER_CONVERSATION_COMMAND = 'runls.filterConversation';

/** How long the record files stay quiet before open conversations are made again. */
const REFRESH_DELAY_MS = 300;
/** How close to an end of the document (in lines) scrolling loads the next page. */
const EDGE_LINES = 3;
const LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

interface Loaded {
  query: ConversationQuery;
  records: WireRecord[];
  /** The page after the last record loaded, and the one before the first; null at an end. */
  cursor: string | null;
  previousCursor: string | null;
  blocks: Block[];
  text: string;
  /** Where the document opens (the record it was shown from), until it is drawn. */
  at?: WireLocation;
  loading?: Promise<void>;
}

export interface ConversationHost {
  client(): Promise<RequestSender | undefined>;
  runInfo(): Promise<RunInfo | undefined>;
  currentEpisode(): string;
  /** Records a page (runls.conversation.pageSize). */
  pageSize(): number;
  showError(method: string, e: unknown): void;
}

/** Where a conversation document opens: its query, and the record to select. */
export interface ShowTarget {
  query: ConversationQuery;
  at?: WireLocation;
}

export class ConversationDocuments
  implements vscode.TextDocumentContentProvider, vscode.DocumentLinkProvider, vscode.DocumentSymbolProvider, vscode.FoldingRangeProvider, vscode.Disposable
{
  private readonly docs = new Map<string, Loaded>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[];
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  /** The first visible line each conversation editor showed last (to tell scrolling up). */
  private readonly tops = new WeakMap<vscode.TextEditor, number>();

  constructor(private readonly host: ConversationHost) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/episode-*/**/*.{history,log}');
    const selector = { scheme: CONVERSATION_SCHEME };
    this.disposables = [
      this.changed,
      watcher,
      watcher.onDidChange(() => this.refreshSoon()),
      watcher.onDidCreate(() => this.refreshSoon()),
      watcher.onDidDelete(() => this.refreshSoon()),
      vscode.workspace.registerTextDocumentContentProvider(CONVERSATION_SCHEME, this),
      vscode.languages.registerDocumentLinkProvider(selector, this),
      vscode.languages.registerDocumentSymbolProvider(selector, this, { label: 'runls' }),
      vscode.languages.registerFoldingRangeProvider(selector, this),
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (d.uri.scheme === CONVERSATION_SCHEME) this.docs.delete(d.uri.toString());
      }),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => this.onScrolled(e.textEditor, e.visibleRanges)),
      vscode.window.onDidChangeTextEditorSelection((e) => this.onCursor(e.textEditor)),
      vscode.commands.registerCommand(SHOW_CONVERSATION_COMMAND, (arg?: unknown) => this.showCommand(arg)),
      vscode.commands.registerCommand(SHOW_CONVERSATION_AT_COMMAND, () => this.showAtCursor()),
      vscode.commands.registerCommand(OPEN_RECORD_COMMAND, () => this.openAtCursor()),
      vscode.commands.registerCommand(LOAD_MORE_RECORDS_COMMAND, () => this.loadActive('more')),
      vscode.commands.registerCommand(LOAD_EARLIER_RECORDS_COMMAND, () => this.loadActive('earlier')),
      vscode.commands.registerCommand(FILTER_CONVERSATION_COMMAND, () => this.filterActive()),
    ];
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    for (const d of this.disposables) d.dispose();
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const key = uri.toString();
    let doc = this.docs.get(key);
    if (!doc) {
      const query = parseConversationUri(uri.query);
      if (!query) return `runls: not a conversation: ${key}\n`;
      doc = { query, records: [], cursor: null, previousCursor: null, blocks: [], text: '' };
      this.docs.set(key, doc);
      await this.reload(doc);
    } else if (doc.loading) {
      await doc.loading;
    }
    return doc.text;
  }

  provideDocumentLinks(document: vscode.TextDocument): vscode.DocumentLink[] {
    const doc = this.docs.get(document.uri.toString());
    if (!doc) return [];
    return doc.blocks
      .filter((b) => b.header < document.lineCount)
      .map((b) => {
        const end = document.lineAt(b.header).range.end;
        const link = new vscode.DocumentLink(new vscode.Range(b.header, 0, b.header, end.character), locationUri(b.location));
        link.tooltip = 'Open the record in its file';
        return link;
      });
  }

  /** The Outline, breadcrumbs and sticky scroll: a symbol a record, `HH:mm:ss agent text`. */
  provideDocumentSymbols(document: vscode.TextDocument): vscode.DocumentSymbol[] {
    const doc = this.docs.get(document.uri.toString());
    if (!doc) return [];
    return doc.blocks
      .filter((b) => b.last < document.lineCount)
      .map((b) => {
        const name = shorten(`${b.time ? b.time.slice(11, 19) : '(no time)'} ${b.agent}: ${b.first}`, 100);
        const detail = [b.level, b.conversation].filter((s): s is string => !!s).join(' · ');
        const range = new vscode.Range(b.header, 0, b.last, document.lineAt(b.last).range.end.character);
        const head = document.lineAt(b.header).range;
        return new vscode.DocumentSymbol(name || '(empty)', detail, vscode.SymbolKind.Event, range, head);
      });
  }

  provideFoldingRanges(document: vscode.TextDocument): vscode.FoldingRange[] {
    const doc = this.docs.get(document.uri.toString());
    if (!doc) return [];
    return doc.blocks.filter((b) => b.last > b.header && b.last < document.lineCount).map((b) => new vscode.FoldingRange(b.header, b.last));
  }

  /**
   * Show Conversation. `arg` is what the command came with: nothing (the palette:
   * pick episode and conversation), a ShowTarget, a ConversationQuery, or an Evidence
   * view row (its record selected).
   */
  private async showCommand(arg?: unknown): Promise<void> {
    const target = targetOf(arg);
    if (target === null) {
      void vscode.window.showInformationMessage('runls: this evidence is a line of a note file, not a record of a conversation.');
      return;
    }
    if (target) return this.show(target);
    const picked = await this.pick();
    if (picked) await this.show({ query: picked });
  }

  /**
   * Opens (or brings forward) the document of a query; with `at`, the page around
   * that record is loaded when it is not, and its block is selected and revealed.
   */
  async show(target: ShowTarget): Promise<void> {
    const uri = vscode.Uri.parse(conversationUri(target.query));
    const key = uri.toString();
    const loaded = this.docs.get(key);
    if (loaded === undefined && target.at) {
      // Not open: the content provider loads the page around the record.
      const query = parseConversationUri(uri.query) ?? target.query;
      const doc: Loaded = { query, records: [], cursor: null, previousCursor: null, blocks: [], text: '', at: target.at };
      this.docs.set(key, doc);
      doc.loading = this.reload(doc).finally(() => (doc.loading = undefined));
    }
    const document = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(document, { preview: false });
    const doc = this.docs.get(key);
    if (!doc || !target.at) return;
    if (recordIndexAt(doc.records, target.at) < 0) {
      // Open, but without that record loaded: the page around it replaces the pages.
      doc.records = [];
      doc.at = target.at;
      const changed = this.nextChange(uri);
      await this.reload(doc);
      this.changed.fire(uri);
      await changed;
    }
    this.select(editor, doc, target.at);
  }

  /** Selects the block of the record at `at` (its header to its last line), the cursor on its header, in the middle of the view. */
  private select(editor: vscode.TextEditor, doc: Loaded, at: WireLocation): void {
    const i = recordIndexAt(doc.records, at);
    const b = doc.blocks[i];
    if (!b || b.last >= editor.document.lineCount) return;
    const end = editor.document.lineAt(b.last).range.end;
    editor.selection = new vscode.Selection(end, new vscode.Position(b.header, 0));
    editor.revealRange(new vscode.Range(b.header, 0, b.last, 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    editor.revealRange(new vscode.Range(b.header, 0, b.header, 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  /** Picks the episode (the current one first) and then one of its conversations. */
  private async pick(): Promise<ConversationQuery | undefined> {
    const info = await this.host.runInfo();
    const client = await this.host.client();
    if (!info || !client) return undefined;
    const ep = await vscode.window.showQuickPick(
      episodePicks(info, this.host.currentEpisode()).filter((p) => p.value !== ''),
      { title: 'runls: Show Conversation: pick the episode', matchOnDescription: true },
    );
    if (!ep) return undefined;
    let list;
    try {
      list = await conversations(client, ep.value);
    } catch (e) {
      this.host.showError('run/info', e);
      return undefined;
    }
    if (list.length === 0) {
      void vscode.window.showInformationMessage(`runls: ${ep.value} has no records written in a conversation.`);
      return undefined;
    }
    const conv = await vscode.window.showQuickPick(summaryPicks(list), {
      title: `runls: Show Conversation: pick the conversation (of ${ep.value})`,
      matchOnDescription: true,
      matchOnDetail: true,
    });
    return conv && { episode: ep.value, conversation: conv.conversation };
  }

  /**
   * Show Conversation of This Record (a record file's context menu): the conversation
   * of the record under the cursor (the episode's records for one without the field),
   * opened at that record.
   */
  private async showAtCursor(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return this.showCommand();
    const place = placeOf(editor);
    if (!place) {
      void vscode.window.showInformationMessage('runls: the cursor is not on a record of an episode of the run.');
      return;
    }
    await this.show(targetOfPlace(editor.document.uri, place));
  }

  /** Enter: opens the record of the block under the cursor in its file. */
  private async openAtCursor(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const doc = editor && this.docs.get(editor.document.uri.toString());
    const block = doc && blockAt(doc.blocks, editor.selection.active.line);
    if (!block) return;
    await openLocation(block.location);
  }

  /** The record of the block under the cursor of a conversation document, for commands elsewhere. */
  blockAtCursor(editor: vscode.TextEditor): Block | undefined {
    const doc = this.docs.get(editor.document.uri.toString());
    return doc && blockAt(doc.blocks, editor.selection.active.line);
  }

  /** The query of a conversation document. */
  queryOf(uri: vscode.Uri): ConversationQuery | undefined {
    return this.docs.get(uri.toString())?.query;
  }

  private async loadActive(which: 'more' | 'earlier'): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const doc = editor && this.docs.get(editor.document.uri.toString());
    if (doc) await this.load(editor.document.uri, doc, which);
  }

  /**
   * Filter: the minimum level, the agent and the time window of the active
   * conversation, in a new document (its tab titled with the filters), opened at the
   * record under the cursor when that record passes them. The window is offered from
   * the record under the cursor (up to it, around it, from it), or typed as
   * HH:mm[:ss] on the record's day (or a full date and time).
   */
  private async filterActive(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const doc = editor && this.docs.get(editor.document.uri.toString());
    if (!editor || !doc) {
      void vscode.window.showInformationMessage('runls: open a conversation first (runls: Show Conversation).');
      return;
    }
    const q = doc.query;
    const here = blockAt(doc.blocks, editor.selection.active.line) ?? doc.blocks[0];
    const level = await vscode.window.showQuickPick(
      ['', ...LEVELS].map((l) => ({
        label: l || 'All levels',
        description: l ? `${l} and above; records without a level (history) left out` : 'every record',
        value: l,
        picked: (q.minLevel ?? '') === l,
      })),
      { title: 'runls: Filter: minimum level' },
    );
    if (!level) return;
    const agents = [...new Set(doc.records.map((r) => r.agent))].sort();
    if (q.agent && !agents.includes(q.agent)) agents.unshift(q.agent);
    const agent = await vscode.window.showQuickPick(
      [{ label: 'All agents', value: '' }, ...agents.map((a) => ({ label: a, value: a, description: q.agent === a ? 'current' : undefined }))],
      { title: 'runls: Filter: agent' },
    );
    if (!agent) return;
    const window = await this.pickWindow(q, here);
    if (!window) return;
    const next: ConversationQuery = {
      episode: q.episode,
      conversation: q.conversation,
      agent: agent.value || undefined,
      minLevel: level.value || undefined,
      from: window.from || undefined,
      to: window.to || undefined,
    };
    const at = here && passes(here, next) ? here.location : undefined;
    await this.show({ query: next, at });
  }

  /** The time window: none, the query's, or one made from the record `here`, or typed. */
  private async pickWindow(q: ConversationQuery, here: Block | undefined): Promise<{ from: string; to: string } | undefined> {
    type Item = vscode.QuickPickItem & { from?: string; to?: string; custom?: boolean };
    const items: Item[] = [{ label: `Whole ${q.conversation ? 'conversation' : 'episode'}`, description: 'no time bounds', from: '', to: '' }];
    if (q.from || q.to) items.unshift({ label: 'Keep the window', description: `${q.from ?? 'start'} – ${q.to ?? 'end'}`, from: q.from ?? '', to: q.to ?? '' });
    const t = here?.time ? secondOf(here.time) : undefined;
    if (t && here?.time) {
      const clock = t.slice(11);
      items.push(
        { label: `Up to this record`, description: `to ${clock}`, from: '', to: t },
        { label: `Around this record`, description: `${secondOf(here.time, -5 * 60_000)?.slice(11)} – ${secondOf(here.time, 5 * 60_000)?.slice(11)} (5 minutes each side)`, from: secondOf(here.time, -5 * 60_000), to: secondOf(here.time, 5 * 60_000) },
        { label: `From this record on`, description: `from ${clock}`, from: t, to: '' },
      );
    }
    items.push({ label: 'Type the window…', description: 'HH:mm[:ss] on the record\'s day, or yyyy-MM-dd HH:mm[:ss]', custom: true });
    const chosen = await vscode.window.showQuickPick(items, { title: 'runls: Filter: time window' });
    if (!chosen) return undefined;
    if (!chosen.custom) return { from: chosen.from ?? '', to: chosen.to ?? '' };
    const day = dayOf(here?.time) ?? dayOf(q.from) ?? dayOf(q.to);
    const ask = async (which: 'from' | 'to', prefill: string | undefined) => {
      const typed = await vscode.window.showInputBox({
        title: `runls: Filter: ${which} (HH:mm[:ss]${day ? ` on ${day}` : ''}, or yyyy-MM-dd HH:mm[:ss]; inclusive; empty: none)`,
        value: prefill ?? '',
        validateInput: (v) => {
          const r = parseTimeBound(v, day, which === 'to');
          return 'error' in r ? r.error : undefined;
        },
      });
      if (typed === undefined) return undefined;
      const r = parseTimeBound(typed, day, which === 'to');
      return 'value' in r ? r.value : undefined;
    };
    const clockOf = (v: string | undefined) => (v && dayOf(v) === day ? v.slice(11) : v);
    const from = await ask('from', clockOf(q.from) ?? (here?.time ? secondOf(here.time, -10 * 60_000)?.slice(11) : undefined));
    if (from === undefined) return undefined;
    const to = await ask('to', clockOf(q.to) ?? t?.slice(11));
    if (to === undefined) return undefined;
    return { from, to };
  }

  /**
   * Loads the next page when the end of a document comes into view, and the page
   * before when the user scrolls up to its top (not when it opens there: a page
   * opened at a record shows the records before it already).
   */
  private onScrolled(editor: vscode.TextEditor, ranges: readonly vscode.Range[]): void {
    if (editor.document.uri.scheme !== CONVERSATION_SCHEME) return;
    const doc = this.docs.get(editor.document.uri.toString());
    const first = ranges[0];
    const last = ranges[ranges.length - 1];
    const before = this.tops.get(editor);
    if (first) this.tops.set(editor, first.start.line);
    if (!doc || doc.loading || !first || !last) return;
    if (doc.cursor !== null && last.end.line >= editor.document.lineCount - EDGE_LINES) {
      void this.load(editor.document.uri, doc, 'more');
    } else if (doc.previousCursor !== null && first.start.line <= EDGE_LINES && before !== undefined && first.start.line < before) {
      void this.load(editor.document.uri, doc, 'earlier');
    }
  }

  /** The cursor moved to the first lines (Ctrl+Home, arrows): the page before loads. */
  private onCursor(editor: vscode.TextEditor): void {
    if (editor.document.uri.scheme !== CONVERSATION_SCHEME) return;
    const doc = this.docs.get(editor.document.uri.toString());
    if (!doc || doc.loading || doc.previousCursor === null) return;
    if (editor.selection.active.line <= EDGE_LINES) void this.load(editor.document.uri, doc, 'earlier');
  }

  /**
   * Loads the page after the last record ('more') or before the first ('earlier').
   * Earlier records go above what the user reads: the editors showing the document
   * are kept on the record they showed.
   */
  private async load(uri: vscode.Uri, doc: Loaded, which: 'more' | 'earlier'): Promise<void> {
    if (doc.loading) return doc.loading;
    const cursor = which === 'more' ? doc.cursor : doc.previousCursor;
    if (cursor === null) return;
    doc.loading = (async () => {
      const client = await this.host.client();
      if (!client) return;
      try {
        const page = await records(client, recordsParams(doc.query, { cursor, limit: this.host.pageSize() }));
        const keep = this.viewAnchors(uri, doc);
        if (which === 'more') {
          doc.records.push(...page.records);
          doc.cursor = page.cursor;
        } else {
          doc.records.unshift(...page.records);
          doc.previousCursor = page.previousCursor;
        }
        this.draw(doc);
        const changed = this.nextChange(uri);
        this.changed.fire(uri);
        await changed;
        this.restoreAnchors(uri, doc, keep);
      } catch (e) {
        this.host.showError('run/records', e);
      }
    })().finally(() => (doc.loading = undefined));
    return doc.loading;
  }

  /**
   * Makes a document again, so that a grown file's records take their places in time
   * order: from the first page when it showed the list's start, else from the page
   * around the first record it showed (or the record it opens at); then pages after,
   * until it holds as many records as it showed (at least a page).
   */
  private async reload(doc: Loaded): Promise<void> {
    const client = await this.host.client();
    if (!client) {
      doc.text = 'runls: the server is not available.\n';
      return;
    }
    const limit = this.host.pageSize();
    const want = Math.max(doc.records.length, 1);
    const at = doc.at ?? (doc.previousCursor !== null ? doc.records[0]?.location : undefined);
    const out: WireRecord[] = [];
    let previousCursor: string | null = null;
    let cursor: string | undefined;
    try {
      let page = await records(client, recordsParams(doc.query, { at, limit }));
      previousCursor = page.previousCursor;
      for (;;) {
        out.push(...page.records);
        if (page.cursor === null || out.length >= want) {
          doc.cursor = page.cursor;
          break;
        }
        cursor = page.cursor;
        page = await records(client, recordsParams(doc.query, { cursor, limit }));
      }
      // A server before spec rev 3 ignores `at` and answers from the start: the pages
      // that follow are loaded until they hold the record (at most 20 pages).
      if (doc.at && recordIndexAt(out, doc.at) < 0) {
        for (let n = 0; n < 20 && doc.cursor !== null && recordIndexAt(out, doc.at) < 0; n++) {
          page = await records(client, recordsParams(doc.query, { cursor: doc.cursor, limit }));
          out.push(...page.records);
          doc.cursor = page.cursor;
        }
      }
    } catch (e) {
      this.host.showError('run/records', e);
      doc.text = `runls: run/records failed: ${e instanceof Error ? e.message : e}\n`;
      return;
    }
    doc.records = out;
    doc.previousCursor = previousCursor;
    doc.at = undefined;
    this.draw(doc);
  }

  private draw(doc: Loaded): void {
    const r = render(doc.query, doc.records, doc.cursor !== null, doc.previousCursor !== null);
    doc.text = r.text;
    doc.blocks = r.blocks;
  }

  /**
   * For each editor showing the document: the record at its top line (and how many
   * lines into its block) and the record under its cursor, so that a redraw that adds
   * lines above can put both back where the user had them.
   */
  private viewAnchors(uri: vscode.Uri, doc: Loaded): Array<{ editor: vscode.TextEditor; top?: [WireLocation, number]; cursor?: [WireLocation, number]; selected: boolean }> {
    const out = [];
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.toString() !== uri.toString()) continue;
      // A line above the blocks (the summary, the earlier-records line) is kept as a
      // negative offset from the first block: it then lands in the records added above.
      const topLine = editor.visibleRanges[0]?.start.line ?? 0;
      const curLine = editor.selection.active.line;
      const top = firstBlockFrom(doc.blocks, topLine);
      const cur = firstBlockFrom(doc.blocks, curLine);
      out.push({
        editor,
        top: top && ([top.location, topLine - top.header] as [WireLocation, number]),
        cursor: cur && ([cur.location, curLine - cur.header] as [WireLocation, number]),
        selected: !editor.selection.isEmpty,
      });
    }
    return out;
  }

  private restoreAnchors(uri: vscode.Uri, doc: Loaded, anchors: ReturnType<ConversationDocuments['viewAnchors']>): void {
    const lineOf = (a: [WireLocation, number] | undefined) => {
      if (!a) return undefined;
      const b = doc.blocks[recordIndexAt(doc.records, a[0])];
      return b && Math.max(0, b.header + a[1]);
    };
    for (const a of anchors) {
      if (a.editor.document.uri.toString() !== uri.toString()) continue;
      const top = lineOf(a.top);
      const cur = lineOf(a.cursor);
      if (cur !== undefined && a.cursor) {
        const b = doc.blocks[recordIndexAt(doc.records, a.cursor[0])];
        if (a.selected && a.cursor[1] >= 0 && b && b.last < a.editor.document.lineCount) {
          a.editor.selection = new vscode.Selection(a.editor.document.lineAt(b.last).range.end, new vscode.Position(b.header, 0));
        } else {
          const p = new vscode.Position(cur, 0);
          a.editor.selection = new vscode.Selection(p, p);
        }
      }
      if (top !== undefined && top < a.editor.document.lineCount) {
        a.editor.revealRange(new vscode.Range(top, 0, top, 0), vscode.TextEditorRevealType.AtTop);
      }
    }
  }

  /** Resolves when the document's text next changes (or after two seconds: it may not change). */
  private nextChange(uri: vscode.Uri): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        d.dispose();
        resolve();
      }, 2000);
      const d = vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.toString() !== uri.toString()) return;
        clearTimeout(timer);
        d.dispose();
        resolve();
      });
    });
  }

  private refreshSoon(): void {
    if (this.docs.size === 0) return;
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.refreshAll(), REFRESH_DELAY_MS);
  }

  private async refreshAll(): Promise<void> {
    for (const [key, doc] of this.docs) {
      if (doc.loading) continue;
      const before = doc.text;
      const uri = vscode.Uri.parse(key);
      const keep = this.viewAnchors(uri, doc);
      await this.reload(doc);
      if (doc.text !== before) {
        const changed = this.nextChange(uri);
        this.changed.fire(uri);
        await changed;
        this.restoreAnchors(uri, doc, keep);
      }
    }
  }
}

/** The first block at or after a line (the one the top of a view shows). */
function firstBlockFrom(blocks: Block[], line: number): Block | undefined {
  return blockAt(blocks, line) ?? blocks.find((b) => b.header >= line);
}

/** Whether a record passes a query's filters (so the filtered document can open at it). */
function passes(b: Block, q: ConversationQuery): boolean {
  if (q.agent && b.agent !== q.agent) return false;
  if (q.minLevel && (!b.level || LEVELS.indexOf(b.level) < LEVELS.indexOf(q.minLevel))) return false;
  const t = b.time ? secondOf(b.time) : undefined;
  if ((q.from || q.to) && !t) return false;
  if (t && q.from && t < q.from) return false;
  if (t && q.to && t > q.to) return false;
  return true;
}

/** The record under the cursor of a record file of the run, or undefined. */
export function placeOf(editor: vscode.TextEditor): RecordPlace | undefined {
  const d = editor.document;
  const rel = vscode.workspace.asRelativePath(d.uri, false);
  return recordContext(rel, (n) => d.lineAt(n).text, editor.selection.active.line);
}

/** The conversation (or, for a record without the field, the episode) of a record, opened at it. */
export function targetOfPlace(uri: vscode.Uri, place: RecordPlace): ShowTarget {
  return {
    query: { episode: place.episode, conversation: place.conversation },
    at: { uri: uri.toString(), range: { start: { line: place.line, character: 0 }, end: { line: place.line, character: 0 } } },
  };
}

/** A record's file URI with its line as the fragment VS Code's link opener reads (#L12). */
function locationUri(l: WireLocation): vscode.Uri {
  return vscode.Uri.parse(l.uri).with({ fragment: `L${l.range.start.line + 1}` });
}

/** Opens a record's file with the cursor at the record's first line. */
export async function openLocation(l: WireLocation): Promise<void> {
  const pos = new vscode.Position(l.range.start.line, 0);
  try {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(l.uri));
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos), preview: true });
  } catch (e) {
    void vscode.window.showErrorMessage(`runls: cannot open ${l.uri}: ${e instanceof Error ? e.message : e}`);
  }
}

/**
 * Where a command's argument says to open: a ShowTarget, a ConversationQuery, or an
 * Evidence view row (its record; null: a note file's line, no record); undefined:
 * none given.
 */
function targetOf(arg: unknown): ShowTarget | null | undefined {
  if (typeof arg !== 'object' || arg === null) return undefined;
  const a = arg as { query?: unknown; at?: unknown; episode?: unknown; conversation?: unknown; row?: { item?: Record<string, unknown> } };
  if (typeof a.query === 'object' && a.query !== null) return arg as ShowTarget;
  if (typeof a.episode === 'string' && typeof a.conversation === 'string') return { query: arg as ConversationQuery };
  const item = a.row?.item;
  if (item && typeof item.episode === 'string') {
    // A record has a time (a line before a file's first record has none, nor a note).
    if (item.time === null && item.conversation === null) return null;
    const conversation = typeof item.conversation === 'string' ? item.conversation : '';
    return { query: { episode: item.episode, conversation }, at: item.location as WireLocation };
  }
  return undefined;
}
