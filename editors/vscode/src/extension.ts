// The VS Code side of runls: starts `runls serve` for the run folder and wires its
// features into VS Code. Everything with logic lives in the small modules beside
// this file; this one is the thin layer of VS Code calls.

import * as fs from 'node:fs';
import * as os from 'node:os';
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
import { agentPicks, ContextPick, conversationPicks, episodePicks } from './context';
import { docsCommandUri, docsFragment, MARKDOWN_PREVIEW, SHOW_DOCS_COMMAND } from './diagnosticsLinks';
import { INVALID_PARAMS, infoWhenIndexed, RunInfo, search } from './protocol';
import { EvidencePick, pickLocation, pickTitle, toPicks } from './results';
import { RestartPolicy } from './restartPolicy';
import { resolveServerPath, ServerNotFound } from './serverPath';
import {
  contextMissing,
  didChangeConfigurationParams,
  initializationOptions,
  readServerSettings,
  searchParams,
  ServerSettings,
} from './settings';
import { applyProgress, contextLabel, ServerState, statusView } from './status';
import { arrangeSymbols } from './symbols';

let runls: Runls | undefined;

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
  private lastQuery = '';
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel('runls', { log: true });
    this.status = vscode.window.createStatusBarItem('runls.status', vscode.StatusBarAlignment.Left, 10);
    this.status.name = 'runls';
    this.status.command = 'runls.pickContext';
    this.status.show();
    const cmd = (id: string, fn: () => unknown) => vscode.commands.registerCommand(id, fn);
    this.disposables.push(
      this.output,
      this.status,
      cmd('runls.search', () => this.searchCommand(false)),
      cmd('runls.searchAgain', () => this.searchCommand(true)),
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

  private settings(): ServerSettings {
    return readServerSettings(vscode.workspace.getConfiguration('runls'));
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.render();
  }

  private render(): void {
    const view = statusView(this.state, this.settings());
    this.status.text = view.text;
    this.status.tooltip = view.tooltip;
    this.status.backgroundColor =
      view.alert === undefined ? undefined : new vscode.ThemeColor(`statusBarItem.${view.alert}Background`);
  }

  async start(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      this.setState({ kind: 'stopped' });
      return;
    }
    let serverPath: string;
    try {
      const resolved = resolveServerPath(vscode.workspace.getConfiguration('runls').get<string>('server.path'), {
        PATH: process.env.PATH,
        home: os.homedir(),
        workspaceFolder: folder.uri.scheme === 'file' ? folder.uri.fsPath : undefined,
        isExecutable,
        exeSuffixes: process.platform === 'win32' ? ['.exe', ''] : [''],
      });
      serverPath = resolved.path;
      this.output.info(`server: ${serverPath} (from ${resolved.source})`);
    } catch (e) {
      const msg = e instanceof ServerNotFound ? e.message : String(e);
      this.output.error(msg);
      this.setState({ kind: 'error', message: msg });
      void vscode.window.showErrorMessage(msg, 'Open Settings').then((a) => {
        if (a) void vscode.commands.executeCommand('workbench.action.openSettings', 'runls.server.path');
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
    client.registerFeature(new ProgressObserver(client, (p) => this.setState(applyProgress(this.state, p))));
    client.onDidChangeState((e) => {
      if (e.newState === State.Starting) this.setState({ kind: 'starting' });
      else if (e.newState === State.Running && this.state.kind !== 'indexing') this.setState({ kind: 'ready' });
      else if (e.newState === State.Stopped && this.state.kind !== 'error') this.setState({ kind: 'stopped' });
    });
    this.client = client;
    this.setState({ kind: 'starting' });
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
    const client = this.client;
    if (client?.isRunning()) {
      void client
        .sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(this.settings()))
        .catch((err) => this.output.error(`didChangeConfiguration: ${err}`));
    }
  }

  /** The running client, or a message saying why there is none. */
  private async runningClient(): Promise<LanguageClient | undefined> {
    if (this.client === undefined) {
      await this.start();
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
    this.lastQuery = query;

    // VS Code has no switch to turn a QuickPick's own filtering off: items whose label
    // matches the input box move to the top. The input stays empty and every item is
    // alwaysShow, so the order is the server's; the query is in the title.
    const qp = vscode.window.createQuickPick<EvidencePick>();
    qp.title = `runls: searching "${query}"…`;
    qp.placeholder = `Evidence for "${query}" (${contextLabel(settings)}); Enter opens it`;
    qp.matchOnDescription = false;
    qp.matchOnDetail = false;
    qp.ignoreFocusOut = true;
    qp.busy = true;
    const cts = new vscode.CancellationTokenSource();
    qp.onDidHide(() => {
      cts.cancel();
      qp.dispose();
    });
    qp.onDidAccept(() => {
      const chosen = qp.selectedItems[0] ?? qp.activeItems[0];
      qp.hide();
      if (chosen) void this.openEvidence(chosen);
    });
    qp.show();
    try {
      const result = await search(client, searchParams(query, settings), cts.token);
      const root = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
      qp.items = toPicks(result.items, root);
      qp.title = pickTitle(query, result.items.length, contextLabel(settings));
      if (result.items.length === 0) qp.placeholder = `No evidence for "${query}" (${contextLabel(settings)})`;
    } catch (e) {
      qp.hide();
      if (!cts.token.isCancellationRequested) this.showRequestError('run/search', e);
    } finally {
      qp.busy = false;
    }
  }

  private async openEvidence(pick: EvidencePick): Promise<void> {
    const loc = pickLocation(pick);
    const r = loc.range;
    const range = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
    try {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(loc.uri));
      const editor = await vscode.window.showTextDocument(doc, { preview: false });
      // Selected from its end back to its start: the cursor (and so the view) is at the
      // start of the evidence, not scrolled sideways to the end of a long line.
      editor.selection = new vscode.Selection(range.end, range.start);
      // The line's start first, so the record's timestamp and fields stay in view,
      // then the evidence's start in case it lies beyond the editor's width.
      const lineStart = new vscode.Range(range.start.line, 0, range.start.line, 0);
      editor.revealRange(lineStart, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      editor.revealRange(new vscode.Range(range.start, range.start), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    } catch (e) {
      void vscode.window.showErrorMessage(`runls: cannot open ${loc.uri}: ${e instanceof Error ? e.message : e}`);
    }
  }

  private async pickContext(): Promise<void> {
    const which = await vscode.window.showQuickPick(
      [
        { label: '$(person) Agent', description: this.settings().agent || 'all agents', id: 'agent' },
        { label: '$(history) Episode', description: this.settings().episode || 'none', id: 'episode' },
        { label: '$(comment-discussion) Conversation', description: this.settings().conversation || 'none', id: 'conversation' },
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

  private async pickConversation(): Promise<boolean> {
    const ri = await this.runInfo();
    if (!ri) return false;
    const episode = this.settings().episode;
    if (episode === '') {
      void vscode.window.showInformationMessage('runls: pick an episode first; conversations belong to an episode.');
      return this.pickEpisode();
    }
    return this.pickSetting(
      'conversation',
      `Pick the conversation (of ${episode})`,
      conversationPicks(ri, episode, this.settings().conversation),
    );
  }

  /** Shows `picks` and saves the chosen value in the workspace settings. */
  private async pickSetting(key: string, title: string, picks: ContextPick[]): Promise<boolean> {
    const chosen = await vscode.window.showQuickPick(picks, { title: `runls: ${title}`, matchOnDescription: true });
    if (!chosen) return false;
    const target = vscode.workspace.workspaceFolders ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    await vscode.workspace.getConfiguration('runls').update(key, chosen.value, target);
    this.render();
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
