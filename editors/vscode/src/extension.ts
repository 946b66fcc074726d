// The VS Code side of runls: starts `runls serve` for the run folder and wires its
// features into VS Code. Everything with logic lives in the small modules beside
// this file; this one is the thin layer of VS Code calls.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as readline from 'node:readline';
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ResponseError,
  ServerOptions,
  State,
  StaticFeature,
  TransportKind,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
} from 'vscode-languageclient/node';
import { recordContext, secondOf, summaryPicks } from './conversation';
import { ConversationDocuments, openLocation, placeOf, ShowTarget, targetOfPlace } from './conversationView';
import { FailuresView, failureLocation } from './failuresView';
import { Follower } from './follow';
import { agentPicks, ContextPick, conversationPicks, episodePicks, scopePicks } from './context';
import { docsCommandUri, docsFragment, MARKDOWN_PREVIEW, SHOW_DOCS_COMMAND } from './diagnosticsLinks';
import { conversations, info, INVALID_PARAMS, infoWhenIndexed, RunInfo, search, SearchParams, WireLocation } from './protocol';
import { IndexedOnce } from './indexed';
import { partialShare, PartialRefresh } from './partial';
import { RowOrder, Widening } from './results';
import { LOAD_MORE_COMMAND, ResultsView, ShownSearch, WIDEN_COMMAND } from './resultsView';
import { RestartPolicy } from './restartPolicy';
import { parseServerLine } from './serverLog';
import { findServer, resolveServerPath, ServerNotFound, settingOrigins } from './serverPath';
import {
  ContextKey,
  contextMissing,
  didChangeConfigurationParams,
  initializationOptions,
  readServerSettings,
  searchParams,
  ServerSettings,
  StoredContext,
  withContext,
} from './settings';
import { applyProgress, contextLabel, ServerState, statusView } from './status';
import { arrangeSymbols } from './symbols';

let runls: Runls | undefined;

/** The workspace state key of the context the pickers chose (StoredContext). */
const CONTEXT_STATE = 'runls.context';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  runls = new Runls(context);
  context.subscriptions.push(runls);
  await runls.start();
}

export async function deactivate(): Promise<void> {
  await runls?.stop();
  runls = undefined;
}

class Runls implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private state: ServerState = { kind: 'stopped' };
  private readonly output: vscode.LogOutputChannel;
  private readonly status: vscode.StatusBarItem;
  private readonly policy = new RestartPolicy();
  private readonly results: ResultsView;
  private readonly conversations: ConversationDocuments;
  private readonly failures: FailuresView;
  /** Asks a partial answer shown again when indexing ends (partial.ts). */
  private readonly partial: PartialRefresh;
  /** Runs indexed() once per index, whichever way the extension learns it. */
  private readonly indexedOnce = new IndexedOnce((ri) => this.indexed(ri));
  private lastQuery = '';
  private info: RunInfo | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** The latest start (see start()); a start that is not the latest gives up. */
  private startSeq = 0;
  private starting: Promise<void> | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel('runls', { log: true });
    this.status = vscode.window.createStatusBarItem('runls.status', vscode.StatusBarAlignment.Left, 10);
    this.status.name = 'runls';
    this.status.command = 'runls.pickContext';
    this.status.show();
    const cmd = (id: string, fn: () => unknown) => vscode.commands.registerCommand(id, fn);
    this.results = new ResultsView();
    this.partial = new PartialRefresh(
      async () => {
        const client = this.client;
        return !!client?.isRunning() && (await info(client)).indexing.done;
      },
      // Quietly: the view is not brought forward, the row order and Load more's count stay.
      () => this.again({ quiet: true, topK: this.results.shown?.topK }),
    );
    const conversations = new ConversationDocuments({
      client: () => this.runningClient(),
      runInfo: () => this.runInfo(),
      currentEpisode: () => this.settings().episode,
      pageSize: () => pageSize(vscode.workspace.getConfiguration('runls').get<unknown>('conversation.pageSize')),
      showError: (method, e) => this.showRequestError(method, e),
    });
    this.conversations = conversations;
    this.failures = new FailuresView({
      client: () => this.runningClient(),
      episodes: async () => (await this.runInfo())?.episodes.map((e) => e.episode),
      rootUri: () => vscode.workspace.workspaceFolders?.[0]?.uri.toString(),
      openLocation,
      showError: (method, e) => this.showRequestError(method, e),
    });
    this.disposables.push(
      conversations,
      this.failures,
      new Follower(),
      this.output,
      this.status,
      this.results,
      cmd('runls.search', () => this.searchCommand(false)),
      cmd('runls.searchAgain', () => this.searchCommand(true)),
      cmd('runls.searchSelection', () => this.searchSelection()),
      cmd('runls.searchBefore', () => this.searchBefore()),
      vscode.commands.registerCommand('runls.showFailureConversation', (node: unknown) => this.showFailureConversation(node)),
      cmd('runls.pickScope', () => this.pickScope()),
      vscode.commands.registerCommand(WIDEN_COMMAND, (w: Widening) => this.widen(w)),
      vscode.commands.registerCommand(LOAD_MORE_COMMAND, (topK: unknown) => this.loadMore(Number(topK))),
      cmd('runls.pickAgent', () => this.pickAgent()),
      cmd('runls.pickEpisode', () => this.pickEpisode()),
      cmd('runls.pickConversation', () => this.pickConversation()),
      cmd('runls.pickContext', () => this.pickContext()),
      cmd('runls.restartServer', () => this.restart()),
      cmd('runls.showOutput', () => this.output.show(true)),
      vscode.commands.registerCommand(SHOW_DOCS_COMMAND, (fragment: unknown) => this.showDocs(fragment)),
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
    );
    this.render();
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) d.dispose();
  }

  /** The extension's settings other than runls.server.path that hold a user value in this window. */
  private userSettingKeys(): string[] {
    const props = (this.context.extension.packageJSON as { contributes?: { configuration?: { properties?: object } } }).contributes?.configuration?.properties ?? {};
    const keys = Object.keys(props);
    // runls.conversation's value holds runls.conversation.pageSize's too: a key that
    // prefixes another is asked only for its own value.
    const own = (k: string) => {
      const v = vscode.workspace.getConfiguration().inspect(k)?.globalValue;
      return keys.some((o) => o.startsWith(`${k}.`)) && typeof v === 'object' ? undefined : v;
    };
    return keys.filter((k) => k !== 'runls.server.path' && own(k) !== undefined);
  }

  /** The settings, with the context the pickers chose laid over them. */
  private settings(): ServerSettings {
    return withContext(readServerSettings(vscode.workspace.getConfiguration('runls')), this.storedContext());
  }

  private storedContext(): StoredContext {
    return this.context.workspaceState.get<StoredContext>(CONTEXT_STATE) ?? {};
  }

  /**
   * Saves a pick: in the extension's workspace state (never in the run folder's
   * .vscode/settings.json), or in the user settings when runls.saveContextIn says so;
   * then the server gets the new defaults.
   */
  private async saveContext(key: ContextKey, value: string): Promise<void> {
    const stored = { ...this.storedContext() };
    if (vscode.workspace.getConfiguration('runls').get<string>('saveContextIn') === 'userSettings') {
      delete stored[key];
      await this.context.workspaceState.update(CONTEXT_STATE, stored);
      await vscode.workspace.getConfiguration('runls').update(key, value, vscode.ConfigurationTarget.Global);
    } else {
      stored[key] = value;
      await this.context.workspaceState.update(CONTEXT_STATE, stored);
      this.pushSettings();
    }
    this.render();
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.render();
  }

  private render(): void {
    void this.results?.contextChanged((shown) => this.contextLabelFor(shown));
    const view = statusView(this.state, this.settings(), this.info);
    this.status.text = view.text;
    this.status.tooltip = view.tooltip;
    this.status.backgroundColor =
      view.alert === undefined ? undefined : new vscode.ThemeColor(`statusBarItem.${view.alert}Background`);
  }

  /**
   * Starts the server for the first folder. A start that is still looking for the
   * server (findServer's second look) is awaited by the commands that need it; a
   * newer start (a restart, a changed runls.server.path) makes an older one give up.
   */
  start(): Promise<void> {
    const seq = ++this.startSeq;
    const started = this.doStart(seq).finally(() => {
      if (this.starting === started) this.starting = undefined;
    });
    this.starting = started;
    return started;
  }

  private async doStart(seq: number): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      this.setState({ kind: 'stopped' });
      return;
    }
    let serverPath: string;
    this.setState({ kind: 'starting' });
    try {
      const resolved = await findServer(
        () =>
          resolveServerPath(vscode.workspace.getConfiguration('runls').get<string>('server.path'), {
            PATH: process.env.PATH,
            home: os.homedir(),
            workspaceFolder: folder.uri.scheme === 'file' ? folder.uri.fsPath : undefined,
            isExecutable,
            exeSuffixes: process.platform === 'win32' ? ['.exe', ''] : [''],
          }),
        {
          onChange: (listener) =>
            vscode.workspace.onDidChangeConfiguration((e) => {
              if (!e.affectsConfiguration('runls')) return;
              this.output.info('The runls settings changed: looking for the server again.');
              listener();
            }),
          // Where the setting's value came from, for a window that read it otherwise than expected.
          retrying: (miss, ms) =>
            this.output.warn(
              `${miss.message} (runls.server.path in this window: ${settingOrigins(vscode.workspace.getConfiguration('runls').inspect<string>('server.path'), this.userSettingKeys())}.) ` +
                `Reading the settings again in ${ms / 1000} s or at their first change.`,
            ),
        },
      );
      if (seq !== this.startSeq) return;
      serverPath = resolved.path;
      this.output.info(`server: ${serverPath} (from ${resolved.source})`);
    } catch (e) {
      if (seq !== this.startSeq) return;
      const msg = e instanceof ServerNotFound ? e.message : String(e);
      this.output.error(msg);
      this.setState({ kind: 'error', message: msg });
      void vscode.window.showErrorMessage(msg, 'Open Settings').then((a) => {
        if (a) void openServerPathSetting();
      });
      return;
    }

    const serverOptions: ServerOptions = {
      command: serverPath,
      args: ['serve'],
      transport: TransportKind.stdio,
      options: { cwd: folder.uri.fsPath },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'runls-history' },
        { scheme: 'file', language: 'runls-log' },
      ],
      workspaceFolder: folder,
      initializationOptions: () => initializationOptions(this.settings()),
      outputChannel: this.output,
      // The server's log lines keep their level (by default each would be an error).
      stdioOptions: {
        stdout: () => undefined,
        stderr: (input, channel) => {
          readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', (line) => {
            const { level, text } = parseServerLine(line);
            channel[level](text);
          });
        },
      },
      traceOutputChannel: this.output,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          if (this.policy.shouldRestart(Date.now())) {
            this.output.warn(`server exited; restarting (crash ${this.policy.recent} of at most 3 in 3 minutes)`);
            this.setState({ kind: 'starting' });
            return { action: CloseAction.Restart, handled: true };
          }
          const message = 'The runls server crashed too often and was not restarted. Run "runls: Restart Server" to try again.';
          this.setState({ kind: 'error', message: 'crashed too often' });
          return { action: CloseAction.DoNotRestart, message };
        },
      },
      middleware: {
        provideWorkspaceSymbols: async (query, token, next) => {
          const symbols = await next(query, token);
          return symbols ? arrangeSymbols(query, [...symbols]) : symbols;
        },
        handleDiagnostics: (uri, diagnostics, next) => {
          for (const d of diagnostics) {
            const fragment = docsFragment(d.code as never, d.source);
            if (fragment !== undefined) d.code = { value: d.code as string, target: vscode.Uri.parse(docsCommandUri(fragment)) };
          }
          next(uri, diagnostics);
        },
        workspace: {
          // A server that pulls its settings gets exactly what initializationOptions hold.
          configuration: async (params, token, next) => {
            const answer = await next(params, token);
            if (!Array.isArray(answer)) return answer;
            return params.items.map((item, i) => (item.section === 'runls' ? this.settings() : answer[i]));
          },
        },
      },
    };

    const client = new LanguageClient('runls', 'runls', serverOptions, clientOptions);
    client.registerFeature(
      new ProgressObserver(client, (p) => {
        if (this.client !== client) return;
        this.setState(applyProgress(this.state, p));
        if (p.kind === 'begin') this.indexedOnce.progressBegan();
        if (p.kind === 'end') this.indexedOnce.progressEnded();
      }),
    );
    client.onDidChangeState((e) => {
      if (e.newState === State.Starting) this.setState({ kind: 'starting' });
      else if (e.newState === State.Running) {
        // Running is the server's initialize answer, not its index: the status says
        // ready once the first index is done (indexed.ts: run/info or the progress's end).
        const session = this.indexedOnce.started();
        if (this.state.kind !== 'indexing') this.setState({ kind: 'indexing' });
        void this.indexedOnce.poll(session, () => info(client), {
          alive: () => this.client === client && client.isRunning(),
          onError: (err) => this.output.debug(`run/info: ${err}`),
        });
      }
      else if (e.newState === State.Stopped && this.state.kind !== 'error') this.setState({ kind: 'stopped' });
    });
    this.client = client;
    try {
      await client.start();
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      this.output.error(`server did not start: ${msg}`);
      this.setState({ kind: 'error', message: msg });
    }
  }

  /** Opens the README rendered in the Markdown preview, scrolled to `fragment`. */
  private async showDocs(fragment: unknown): Promise<void> {
    // vsce stores the README as readme.md; a source checkout has README.md.
    const name = ['readme.md', 'README.md'].find((n) => fs.existsSync(vscode.Uri.joinPath(this.context.extensionUri, n).fsPath)) ?? 'README.md';
    const readme = vscode.Uri.joinPath(this.context.extensionUri, name);
    const anchor = typeof fragment === 'string' ? fragment : '';
    try {
      await vscode.commands.executeCommand('vscode.openWith', readme.with({ fragment: anchor }), MARKDOWN_PREVIEW);
    } catch (e) {
      // No Markdown preview (disabled): the text, at the section's line.
      this.output.warn(`Markdown preview: ${e}`);
      const doc = await vscode.workspace.openTextDocument(readme);
      const line = doc.getText().split(/\r?\n/).findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').trim().toLowerCase().replace(/[^a-z0-9]+/g, '-') === anchor);
      const pos = new vscode.Position(Math.max(line, 0), 0);
      await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos) });
    }
  }

  async stop(): Promise<void> {
    this.startSeq++; // a start still looking for the server gives up
    const client = this.client;
    this.client = undefined;
    if (client === undefined) return;
    try {
      if (client.needsStop()) await client.stop(2000);
    } catch (e) {
      this.output.warn(`stopping the server: ${e}`);
    }
    await client.dispose().catch(() => undefined);
  }

  private async restart(): Promise<void> {
    this.policy.reset();
    await this.stop();
    await this.start();
  }

  private onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration('runls')) return;
    this.render();
    if (e.affectsConfiguration('runls.server.path')) {
      void this.restart();
      return;
    }
    this.pushSettings();
  }

  /** Sends the settings (the picked context laid over them) to a running server. */
  private pushSettings(): void {
    const client = this.client;
    if (client?.isRunning()) {
      void client
        .sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(this.settings()))
        .catch((err) => this.output.error(`didChangeConfiguration: ${err}`));
    }
  }

  /**
   * The run's index is done (indexed.ts calls it once per index, from the progress's
   * end or the run/info poll): the status ready, its overview from run/info, the
   * Failures view asked again when it was shown, a partial answer asked again.
   */
  private indexed(ri: RunInfo | undefined): void {
    if (this.state.kind === 'indexing') this.setState({ kind: 'ready' });
    if (ri) {
      this.info = ri;
      this.render();
    } else {
      void this.refreshInfo();
    }
    this.failures.onIndexed();
    void this.partial.indexed();
  }

  /** run/info for the status bar's overview of the run; quietly nothing when it fails. */
  private async refreshInfo(): Promise<void> {
    const client = this.client;
    if (!client?.isRunning()) return;
    try {
      this.info = await info(client);
      this.render();
    } catch (e) {
      this.output.debug(`run/info: ${e}`);
    }
  }

  /** The running client, or a message saying why there is none. */
  private async runningClient(): Promise<LanguageClient | undefined> {
    if (this.client === undefined) {
      await (this.starting ?? this.start());
    }
    const client = this.client;
    if (client === undefined || client.state === State.Stopped) {
      const why = this.state.kind === 'error' ? this.state.message : 'it is not running';
      void vscode.window.showErrorMessage(`runls: the server is not available (${why}).`, 'Show Output').then((a) => {
        if (a) this.output.show(true);
      });
      return undefined;
    }
    if (client.state === State.Starting) {
      await new Promise<void>((resolve) => {
        const d = client.onDidChangeState((e) => {
          if (e.newState !== State.Starting) {
            d.dispose();
            resolve();
          }
        });
      });
    }
    return client.isRunning() ? client : undefined;
  }

  private async runInfo(): Promise<RunInfo | undefined> {
    const client = await this.runningClient();
    if (!client) return undefined;
    try {
      return await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: 'runls: reading the run' },
        () => infoWhenIndexed(client),
      );
    } catch (e) {
      this.showRequestError('run/info', e);
      return undefined;
    }
  }

  private async searchCommand(again: boolean): Promise<void> {
    const client = await this.runningClient();
    if (!client) return;

    let settings = this.settings();
    const missing = contextMissing(settings);
    if (missing.length > 0) {
      const pick = await vscode.window.showQuickPick(
        [
          { label: '$(list-selection) Pick the chat context', description: 'episode and conversation from the run', id: 'pick' },
          { label: '$(search) Search without it', description: 'notes and plain files only', id: 'go' },
        ],
        {
          title: `runls: no ${missing.join(' and no ')} set`,
          placeHolder: 'Record files (.history, .log) give evidence only with an episode and a conversation',
        },
      );
      if (!pick) return;
      if (pick.id === 'pick') {
        if (!(await this.pickEpisode()) || !(await this.pickConversation())) return;
        settings = this.settings();
      }
    }

    let query = this.lastQuery;
    if (!again || query === '') {
      const typed = await vscode.window.showInputBox({
        title: 'runls: Search Agent Memory',
        prompt: `Words to rank the evidence by (BM25). Context: ${contextLabel(settings)}`,
        placeHolder: 'e.g. deploy database migration',
        value: this.lastQuery,
        ignoreFocusOut: true,
      });
      if (typed === undefined || typed.trim() === '') return;
      query = typed.trim();
    }
    await this.search(query);
  }

  /** Searches the editor's selection, or the word under the cursor. */
  private async searchSelection(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return this.searchCommand(false);
    const sel = editor.selection;
    let text = sel.isEmpty ? '' : editor.document.getText(sel);
    if (text.trim() === '') {
      const word = editor.document.getWordRangeAtPosition(sel.active);
      text = word ? editor.document.getText(word) : '';
    }
    text = text.replace(/\s+/g, ' ').trim();
    if (text === '') return this.searchCommand(false);
    await this.search(text);
  }

  /**
   * Searches before a record: the record under the cursor (of a record file or a
   * conversation document) gives the time bound (`to`, spec §5) and the episode and
   * conversation the search is asked in; the results show in time order.
   */
  private async searchBefore(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return;
    let before: { time: string | null; episode: string; conversation: string } | undefined;
    const block = this.conversations.blockAtCursor(editor);
    const q = this.conversations.queryOf(editor.document.uri);
    if (block && q) before = { time: block.time, episode: q.episode, conversation: block.conversation ?? '' };
    else before = placeOf(editor);
    const to = before?.time ? secondOf(before.time) : undefined;
    if (!before || !to) {
      void vscode.window.showInformationMessage('runls: put the cursor on a record (of a .history or .log file, or of a conversation) to search before it.');
      return;
    }
    const sel = editor.selection;
    const word = sel.isEmpty ? editor.document.getWordRangeAtPosition(sel.active) : sel;
    const typed = await vscode.window.showInputBox({
      title: `runls: Search Before This Record (up to ${to}, ${before.episode}${before.conversation ? ` · ${before.conversation}` : ''})`,
      prompt: 'Words to find in what was written before the record; the results are listed in time order.',
      value: (word ? editor.document.getText(word) : this.lastQuery).replace(/\s+/g, ' ').trim(),
      ignoreFocusOut: true,
    });
    if (typed === undefined || typed.trim() === '') return;
    const overrides = before.conversation ? { episode: before.episode, conversation: before.conversation } : undefined;
    await this.search(typed.trim(), { to, overrides, order: 'time' });
  }

  /** The context label a search is shown with: the settings', or the record's episode and conversation for a search before it. */
  private contextLabelFor(shown: Pick<ShownSearch, 'overrides'>): string {
    return contextLabel({ ...this.settings(), ...(shown.overrides ?? {}) });
  }

  /**
   * Runs a search with the current settings and shows it in the results view.
   * `topK` (Load more) and `allConversations` (a widening) apply to this search only;
   * `to` and `overrides` make a search before a record.
   */
  private async search(
    query: string,
    opts: {
      topK?: number;
      allConversations?: boolean;
      keep?: boolean;
      to?: string;
      overrides?: { episode: string; conversation: string };
      order?: RowOrder;
      /** The view is not brought forward (a partial answer asked again when indexing ends). */
      quiet?: boolean;
    } = {},
  ): Promise<void> {
    const client = await this.runningClient();
    if (!client) return;
    const settings = { ...this.settings(), ...(opts.overrides ?? {}) };
    this.lastQuery = query;
    const params: SearchParams = searchParams(query, settings);
    const topK = opts.topK ?? settings.topK;
    params.topK = topK;
    if (opts.allConversations) params.allConversations = true;
    if (opts.to) params.to = opts.to;
    try {
      const result = await vscode.window.withProgress(
        { location: { viewId: 'runls.results' }, title: `runls: searching "${query}"` },
        (_p, token) => search(client, params, token),
      );
      const root = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
      // The view first, then its rows: focus moving to it once they show would close
      // whatever the user opened in between (a command palette, a picker).
      if (!opts.quiet) await this.results.reveal();
      await this.results.show(
        {
          query,
          result,
          context: this.contextLabelFor(opts),
          asked: { agent: settings.agent, episode: settings.episode, conversation: settings.conversation },
          topK,
          page: settings.topK,
          allConversations: !!opts.allConversations,
          rootUri: root,
          before: opts.to,
          overrides: opts.overrides,
          order: opts.order ?? (opts.keep ? this.results.shown?.order : undefined),
        },
        opts.keep,
      );
      void this.partial.shown(partialShare(result) !== undefined);
      void this.refreshInfo();
    } catch (e) {
      this.showRequestError('run/search', e);
    }
  }

  /** The same search as the one shown, with `opts` over its own. */
  private again(opts: { topK?: number; allConversations?: boolean; keep?: boolean; quiet?: boolean } = {}): Promise<void> {
    const shown = this.results.shown;
    if (!shown) return Promise.resolve();
    return this.search(shown.query, {
      allConversations: shown.allConversations,
      to: shown.before,
      overrides: shown.overrides,
      order: shown.order,
      ...opts,
    });
  }

  /** The next topK of the search shown. */
  private async loadMore(topK: number): Promise<void> {
    if (!this.results.shown || !Number.isFinite(topK)) return;
    await this.again({ topK, keep: true });
  }

  /** Runs a sentence's action: the search shown, widened. */
  private async widen(w: Widening): Promise<void> {
    const shown = this.results.shown;
    if (!shown) return;
    switch (w.kind) {
      case 'allConversations':
        return this.again({ allConversations: true });
      case 'again':
        return this.again();
      case 'scopeRun':
        await this.saveContext('scope', 'run');
        break;
      case 'agent':
        await this.saveContext('agent', w.value);
        break;
      case 'pickContext':
        if (!(await this.pickEpisode()) || !(await this.pickConversation())) return;
        break;
      case 'pickEpisode':
        if (!(await this.pickEpisode())) return;
        break;
      case 'pickConversation':
        if (!(await this.pickConversation())) return;
        break;
    }
    await this.again();
  }

  /** A failure's record (a Failures view row): its conversation, opened at it. */
  private async showFailureConversation(node: unknown): Promise<void> {
    const at = failureLocation(node);
    if (!at) return;
    const target = await recordTarget(at);
    if (target) await this.conversations.show(target);
  }

  private async pickContext(): Promise<void> {
    const which = await vscode.window.showQuickPick(
      [
        { label: '$(person) Agent', description: this.settings().agent || 'all agents', id: 'agent' },
        { label: '$(history) Episode', description: this.settings().episode || 'none', id: 'episode' },
        { label: '$(comment-discussion) Conversation', description: this.settings().conversation || 'none', id: 'conversation' },
        { label: '$(globe) Scope', description: this.settings().scope, id: 'scope' },
        { label: '$(output) Show Output', id: 'output' },
        { label: '$(debug-restart) Restart Server', id: 'restart' },
      ],
      { title: `runls: ${contextLabel(this.settings())}`, placeHolder: 'Change the chat context the searches use' },
    );
    switch (which?.id) {
      case 'agent':
        return void (await this.pickAgent());
      case 'episode':
        if (await this.pickEpisode()) await this.pickConversation();
        return;
      case 'conversation':
        return void (await this.pickConversation());
      case 'scope':
        return void (await this.pickScope());
      case 'output':
        return this.output.show(true);
      case 'restart':
        return this.restart();
    }
  }

  private async pickAgent(): Promise<boolean> {
    const ri = await this.runInfo();
    if (!ri) return false;
    return this.pickSetting('agent', 'Pick the agent whose memory to search', agentPicks(ri, this.settings().agent));
  }

  private async pickEpisode(): Promise<boolean> {
    const ri = await this.runInfo();
    if (!ri) return false;
    return this.pickSetting('episode', 'Pick the current episode', episodePicks(ri, this.settings().episode));
  }

  /**
   * The conversations of the current episode as Show Conversation lists them (agents,
   * record count, time span, first message); bare ids from run/info when the server
   * gives no summaries.
   */
  private async pickConversation(): Promise<boolean> {
    const ri = await this.runInfo();
    if (!ri) return false;
    const episode = this.settings().episode;
    if (episode === '') {
      void vscode.window.showInformationMessage('runls: pick an episode first; conversations belong to an episode.');
      return this.pickEpisode();
    }
    const current = this.settings().conversation;
    let picks: ContextPick[] = conversationPicks(ri, episode, current);
    try {
      const client = await this.runningClient();
      const list = client ? await conversations(client, episode) : [];
      if (list.length > 0) {
        picks = [
          ...summaryPicks(list).map((p) => ({ label: p.label, description: p.conversation === current ? `${p.description} · current` : p.description, detail: p.detail, value: p.conversation, picked: p.conversation === current })),
          ...picks.filter((p) => p.value === ''),
        ];
        if (current !== '') picks = [...picks.filter((p) => p.picked), ...picks.filter((p) => !p.picked)];
      }
    } catch (e) {
      this.output.debug(`run/info ${episode}: ${e}`);
    }
    return this.pickSetting('conversation', `Pick the conversation (of ${episode})`, picks);
  }

  private async pickScope(): Promise<boolean> {
    return this.pickSetting('scope', 'Pick the scope of the searches', scopePicks(this.settings().scope));
  }

  /** Shows `picks` and saves the chosen value (see saveContext). */
  private async pickSetting(key: ContextKey, title: string, picks: ContextPick[]): Promise<boolean> {
    const chosen = await vscode.window.showQuickPick(picks, { title: `runls: ${title}`, matchOnDescription: true, matchOnDetail: true });
    if (!chosen) return false;
    await this.saveContext(key, chosen.value);
    return true;
  }

  private showRequestError(method: string, e: unknown): void {
    if (e instanceof ResponseError && e.code === INVALID_PARAMS) {
      void vscode.window.showErrorMessage(`runls: ${e.message}`, 'Open Settings').then((a) => {
        if (a) void vscode.commands.executeCommand('workbench.action.openSettings', 'runls');
      });
      return;
    }
    const msg = e instanceof Error ? e.message : String(e);
    this.output.error(`${method}: ${msg}`);
    void vscode.window.showErrorMessage(`runls: ${method} failed: ${msg}`, 'Show Output').then((a) => {
      if (a) this.output.show(true);
    });
  }
}

/**
 * Takes over window/workDoneProgress/create from the client's own progress feature
 * (it registers after it, so its handler wins) and feeds $/progress to the status bar.
 */
class ProgressObserver implements StaticFeature {
  constructor(
    private readonly client: LanguageClient,
    private readonly onProgress: (p: { kind: 'begin' | 'report' | 'end'; title?: string; message?: string; percentage?: number }) => void,
  ) {}

  getState() {
    return { kind: 'static' as const };
  }

  fillClientCapabilities(capabilities: { window?: { workDoneProgress?: boolean } }): void {
    capabilities.window = { ...capabilities.window, workDoneProgress: true };
  }

  initialize(): void {
    this.client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      const d = this.client.onProgress(WorkDoneProgress.type, token, (value) => {
        this.onProgress(value);
        if (value.kind === 'end') d.dispose();
      });
    });
  }

  clear(): void {}
}

/**
 * Opens the settings at runls.server.path. In a remote window (code-server, SSH, a
 * container) the User tab leaves out machine-scoped settings and says "No Settings
 * Found": the path of a binary on the machine the server runs on is a Remote
 * setting, so that tab is opened there.
 */
async function openServerPathSetting(): Promise<void> {
  if (vscode.env.remoteName) {
    try {
      await vscode.commands.executeCommand('workbench.action.openRemoteSettings', { query: 'runls.server.path' });
      return;
    } catch {
      // No remote settings command in this window: the User tab below.
    }
  }
  await vscode.commands.executeCommand('workbench.action.openSettings', 'runls.server.path');
}

/** The page size setting, within run/records' bounds (1 to 10000; default 1000). */
function pageSize(v: unknown): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 10_000 ? v : 1000;
}

/** Where a record's conversation opens at it: its file read for the record's conversation. */
async function recordTarget(at: WireLocation): Promise<ShowTarget | undefined> {
  try {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(at.uri));
    const rel = vscode.workspace.asRelativePath(doc.uri, false);
    const line = Math.min(at.range.start.line, doc.lineCount - 1);
    const place = recordContext(rel, (n) => doc.lineAt(n).text, line);
    if (!place) return undefined;
    const t = targetOfPlace(doc.uri, place);
    return { query: t.query, at };
  } catch (e) {
    void vscode.window.showErrorMessage(`runls: cannot read ${at.uri}: ${e instanceof Error ? e.message : e}`);
    return undefined;
  }
}

function isExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
