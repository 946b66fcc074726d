// "runls: Show Conversation": a conversation's records in time order in a read-only
// document of its own scheme (conversation.ts makes its text). Enter on a block, or
// Ctrl+click on its header, opens the record in the agent's file; pages load as the
// user scrolls to the end (or runs Load More Records); the document is made again when
// the run's record files change.

import * as vscode from 'vscode';
import {
  Block,
  blockAt,
  CONVERSATION_SCHEME,
  ConversationQuery,
  conversationUri,
  parseConversationUri,
  recordContext,
  recordsParams,
  render,
  summaryPicks,
} from './conversation';
import { episodePicks } from './context';
import { conversations, records, RequestSender, RunInfo, WireLocation, WireRecord } from './protocol';

export const SHOW_CONVERSATION_COMMAND = 'runls.showConversation';
export const OPEN_RECORD_COMMAND = 'runls.openRecord';
export const LOAD_MORE_RECORDS_COMMAND = 'runls.loadMoreRecords';
export const FILTER_CONVERSATION_COMMAND = 'runls.filterConversation';

/** How long the record files stay quiet before open conversations are made again. */
const REFRESH_DELAY_MS = 300;

interface Loaded {
  query: ConversationQuery;
  records: WireRecord[];
  cursor: string | null;
  blocks: Block[];
  text: string;
  loading?: Promise<void>;
}

export interface ConversationHost {
  client(): Promise<RequestSender | undefined>;
  runInfo(): Promise<RunInfo | undefined>;
  currentEpisode(): string;
  showError(method: string, e: unknown): void;
}

export class ConversationDocuments implements vscode.TextDocumentContentProvider, vscode.DocumentLinkProvider, vscode.Disposable {
  private readonly docs = new Map<string, Loaded>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[];
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly host: ConversationHost) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/episode-*/**/*.{history,log}');
    this.disposables = [
      this.changed,
      watcher,
      watcher.onDidChange(() => this.refreshSoon()),
      watcher.onDidCreate(() => this.refreshSoon()),
      watcher.onDidDelete(() => this.refreshSoon()),
      vscode.workspace.registerTextDocumentContentProvider(CONVERSATION_SCHEME, this),
      vscode.languages.registerDocumentLinkProvider({ scheme: CONVERSATION_SCHEME }, this),
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (d.uri.scheme === CONVERSATION_SCHEME) this.docs.delete(d.uri.toString());
      }),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => this.onScrolled(e.textEditor, e.visibleRanges)),
      vscode.commands.registerCommand(SHOW_CONVERSATION_COMMAND, (arg?: unknown) => this.show(arg)),
      vscode.commands.registerCommand('runls.showConversationAt', () => this.showAtCursor()),
      vscode.commands.registerCommand(OPEN_RECORD_COMMAND, () => this.openAtCursor()),
      vscode.commands.registerCommand(LOAD_MORE_RECORDS_COMMAND, () => this.loadMoreActive()),
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
      doc = { query, records: [], cursor: null, blocks: [], text: '' };
      this.docs.set(key, doc);
      await this.reload(doc);
    }
    return doc.text;
  }

  provideDocumentLinks(document: vscode.TextDocument): vscode.DocumentLink[] {
    const doc = this.docs.get(document.uri.toString());
    if (!doc) return [];
    return doc.blocks.map((b) => {
      const end = document.lineAt(b.header).range.end;
      const link = new vscode.DocumentLink(new vscode.Range(b.header, 0, b.header, end.character), locationUri(b.location));
      link.tooltip = 'Open the record in its file';
      return link;
    });
  }

  /**
   * Show Conversation. `arg` is what the command came with: nothing (the palette:
   * pick episode and conversation), a ConversationQuery, or an Evidence view row.
   */
  async show(arg?: unknown): Promise<void> {
    const fromRow = evidenceContext(arg);
    if (fromRow === null) {
      void vscode.window.showInformationMessage('runls: this evidence was written outside any conversation.');
      return;
    }
    let query = fromRow;
    if (!query) {
      const picked = await this.pick();
      if (!picked) return;
      query = picked;
    }
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(conversationUri(query)));
    await vscode.window.showTextDocument(doc, { preview: false });
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

  /** Show Conversation from the editor's context menu: the record under the cursor's. */
  private async showAtCursor(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return this.show();
    const d = editor.document;
    const rel = vscode.workspace.asRelativePath(d.uri, false);
    const ctx = recordContext(rel, (n) => d.lineAt(n).text, editor.selection.active.line);
    if (!ctx) {
      void vscode.window.showInformationMessage('runls: the cursor is not on a record written in a conversation.');
      return;
    }
    await this.show(ctx);
  }

  /** Enter: opens the record of the block under the cursor in its file. */
  private async openAtCursor(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const doc = editor && this.docs.get(editor.document.uri.toString());
    const block = doc && blockAt(doc.blocks, editor.selection.active.line);
    if (!block) return;
    await openLocation(block.location);
  }

  private async loadMoreActive(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const doc = editor && this.docs.get(editor.document.uri.toString());
    if (doc) await this.loadMore(editor.document.uri, doc);
  }

  /** The minimum level and time window of the active conversation: a new document. */
  private async filterActive(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const doc = editor && this.docs.get(editor.document.uri.toString());
    if (!doc) {
      void vscode.window.showInformationMessage('runls: open a conversation first (runls: Show Conversation).');
      return;
    }
    const levels = ['', 'TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];
    const level = await vscode.window.showQuickPick(
      levels.map((l) => ({ label: l || 'All levels', value: l, picked: (doc.query.minLevel ?? '') === l })),
      { title: 'runls: minimum level of log records (history records have none and stay)' },
    );
    if (!level) return;
    const time = (which: string, value?: string) =>
      vscode.window.showInputBox({
        title: `runls: ${which} (yyyy-MM-dd HH:mm:ss, inclusive; empty: none)`,
        value: value ?? '',
        validateInput: (v) => (v === '' || /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(v) ? undefined : 'yyyy-MM-dd HH:mm:ss'),
      });
    const from = await time('from', doc.query.from);
    if (from === undefined) return;
    const to = await time('to', doc.query.to);
    if (to === undefined) return;
    await this.show({ episode: doc.query.episode, conversation: doc.query.conversation, minLevel: level.value || undefined, from: from || undefined, to: to || undefined });
  }

  /** Loads the next page when the end of a document comes into view. */
  private onScrolled(editor: vscode.TextEditor, ranges: readonly vscode.Range[]): void {
    if (editor.document.uri.scheme !== CONVERSATION_SCHEME) return;
    const doc = this.docs.get(editor.document.uri.toString());
    const last = ranges[ranges.length - 1];
    if (doc && doc.cursor !== null && last && last.end.line >= editor.document.lineCount - 3) {
      void this.loadMore(editor.document.uri, doc);
    }
  }

  private async loadMore(uri: vscode.Uri, doc: Loaded): Promise<void> {
    if (doc.loading) return doc.loading;
    if (doc.cursor === null) return;
    doc.loading = (async () => {
      const client = await this.host.client();
      if (!client) return;
      try {
        const page = await records(client, recordsParams(doc.query, doc.cursor ?? undefined));
        doc.records.push(...page.records);
        doc.cursor = page.cursor;
        this.draw(doc);
        this.changed.fire(uri);
      } catch (e) {
        this.host.showError('run/records', e);
      }
    })().finally(() => (doc.loading = undefined));
    return doc.loading;
  }

  /**
   * Makes a document again from the first page, loading as many records as it showed
   * (at least a page), so that a grown file's records take their places in time order.
   */
  private async reload(doc: Loaded): Promise<void> {
    const client = await this.host.client();
    if (!client) {
      doc.text = 'runls: the server is not available.\n';
      return;
    }
    const want = Math.max(doc.records.length, 1);
    const out: WireRecord[] = [];
    let cursor: string | undefined;
    try {
      for (;;) {
        const page = await records(client, recordsParams(doc.query, cursor));
        out.push(...page.records);
        if (page.cursor === null || out.length >= want) {
          doc.cursor = page.cursor;
          break;
        }
        cursor = page.cursor;
      }
    } catch (e) {
      this.host.showError('run/records', e);
      doc.text = `runls: run/records failed: ${e instanceof Error ? e.message : e}\n`;
      return;
    }
    doc.records = out;
    this.draw(doc);
  }

  private draw(doc: Loaded): void {
    const r = render(doc.query, doc.records, doc.cursor !== null);
    doc.text = r.text;
    doc.blocks = r.blocks;
  }

  private refreshSoon(): void {
    if (this.docs.size === 0) return;
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.refreshAll(), REFRESH_DELAY_MS);
  }

  private async refreshAll(): Promise<void> {
    for (const [key, doc] of this.docs) {
      const before = doc.text;
      await this.reload(doc);
      if (doc.text !== before) this.changed.fire(vscode.Uri.parse(key));
    }
  }
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
 * The conversation a command's argument names: a ConversationQuery, or an Evidence
 * view row (null: its evidence has no conversation); undefined: none given.
 */
function evidenceContext(arg: unknown): ConversationQuery | null | undefined {
  if (typeof arg !== 'object' || arg === null) return undefined;
  const a = arg as { episode?: unknown; conversation?: unknown; row?: { item?: { episode?: unknown; conversation?: unknown } } };
  if (typeof a.episode === 'string' && typeof a.conversation === 'string') return arg as ConversationQuery;
  const item = a.row?.item;
  if (item && typeof item.episode === 'string') {
    return typeof item.conversation === 'string' && item.conversation !== '' ? { episode: item.episode, conversation: item.conversation } : null;
  }
  return undefined;
}
