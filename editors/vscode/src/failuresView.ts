// The Failures view: the run's ERROR records and exceptions grouped by message
// (run/failures, spec §9), a row a group with its count, under it its records (fetched
// when the group is first expanded). A record opens in its file; its inline button
// shows its conversation opened at it. Asked when the view is first shown, on Refresh,
// and when the first indexing ends.

import * as vscode from 'vscode';
import { FailureGroupRow, failuresMessage, FailureRecordRow, groupRecords, groupRows, listGroups, recordRows } from './failures';
import { FailuresParams, FailuresResult, RequestSender, WireLocation } from './protocol';

export const FAILURES_VIEW = 'runls.failures';
export const REFRESH_FAILURES_COMMAND = 'runls.refreshFailures';
export const FILTER_FAILURES_COMMAND = 'runls.filterFailures';
export const OPEN_FAILURE_COMMAND = 'runls.openFailure';

type Node = { kind: 'group'; row: FailureGroupRow; index: number } | { kind: 'record'; row: FailureRecordRow; group: number; index: number };

export interface FailuresHost {
  client(): Promise<RequestSender | undefined>;
  /** The episodes of the run, for the filter. */
  episodes(): Promise<string[] | undefined>;
  rootUri(): string | undefined;
  openLocation(l: WireLocation): Promise<void>;
  showError(method: string, e: unknown): void;
}

export class FailuresView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private groups: Array<Extract<Node, { kind: 'group' }>> = [];
  private result: FailuresResult | undefined;
  private params: FailuresParams = {};
  private asked = false;
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Node>;
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly host: FailuresHost) {
    this.view = vscode.window.createTreeView(FAILURES_VIEW, { treeDataProvider: this, showCollapseAll: true });
    this.disposables = [
      this.view,
      this.changed,
      this.view.onDidChangeVisibility((e) => {
        if (e.visible && !this.asked) void this.refresh();
      }),
      vscode.commands.registerCommand(REFRESH_FAILURES_COMMAND, () => this.showAndRefresh()),
      vscode.commands.registerCommand(FILTER_FAILURES_COMMAND, () => this.filter()),
      vscode.commands.registerCommand(OPEN_FAILURE_COMMAND, (l: WireLocation) => this.host.openLocation(l)),
    ];
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  /** The run grew or was indexed: asks again if the view was shown. */
  onIndexed(): void {
    if (this.asked) void this.refresh();
  }

  /** Refresh Failures: the view brought forward (the palette may run it with the view hidden), then asked. */
  private async showAndRefresh(): Promise<void> {
    this.asked = true;
    await vscode.commands.executeCommand(`${FAILURES_VIEW}.focus`);
    await this.refresh();
  }

  async refresh(): Promise<void> {
    this.asked = true;
    const client = await this.host.client();
    if (!client) return;
    try {
      this.result = await vscode.window.withProgress({ location: { viewId: FAILURES_VIEW } }, (_p, token) => listGroups(client, this.params, token));
    } catch (e) {
      this.host.showError('run/failures', e);
      return;
    }
    this.groups = groupRows(this.result).map((row, index) => ({ kind: 'group', row, index }));
    this.view.message = failuresMessage(this.result, this.params);
    this.changed.fire(undefined);
  }

  /** Which failures: an episode or the whole run, and ERROR or WARN and up. */
  private async filter(): Promise<void> {
    const eps = (await this.host.episodes()) ?? [];
    const ep = await vscode.window.showQuickPick(
      [{ label: 'Whole run', value: '' }, ...eps.map((e) => ({ label: e, value: e }))].map((p) => ({ ...p, picked: p.value === (this.params.episode ?? '') })),
      { title: 'runls: Failures of' },
    );
    if (!ep) return;
    const level = await vscode.window.showQuickPick(
      [
        { label: 'ERROR', description: 'ERROR records, and records holding an exception at any level', value: 'ERROR' },
        { label: 'WARN', description: 'WARN and ERROR records, and records holding an exception', value: 'WARN' },
      ],
      { title: 'runls: Failures: minimum level' },
    );
    if (!level) return;
    this.params = { ...this.params, episode: ep.value || undefined, minLevel: level.value === 'ERROR' ? undefined : level.value };
    await this.refresh();
  }

  getTreeItem(n: Node): vscode.TreeItem {
    if (n.kind === 'group') {
      const item = new vscode.TreeItem(n.row.label, vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `failure-${n.index}`;
      item.description = n.row.description;
      item.tooltip = n.row.tooltip;
      item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground'));
      item.contextValue = 'failureGroup';
      return item;
    }
    const item = new vscode.TreeItem(n.row.label);
    item.id = `failure-${n.group}-${n.index}`;
    item.iconPath = new vscode.ThemeIcon('location');
    item.command = { command: OPEN_FAILURE_COMMAND, title: 'Open Record', arguments: [n.row.location] };
    item.contextValue = 'failureRecord';
    return item;
  }

  async getChildren(n?: Node): Promise<Node[]> {
    if (n === undefined) return this.groups;
    if (n.kind !== 'group') return [];
    const g = n.row.group;
    const params = this.params;
    const client = await this.host.client();
    if (!client) return [];
    let records: WireLocation[] | undefined;
    try {
      records = await vscode.window.withProgress({ location: { viewId: FAILURES_VIEW } }, (_p, token) => groupRecords(client, params, g, token));
    } catch (e) {
      this.host.showError('run/failures', e);
      return [];
    }
    if (records === undefined) {
      // The run no longer has the group: the list is stale.
      void this.refresh();
      return [];
    }
    g.records = records; // fetched once: kept with the group until the next refresh
    return recordRows(g, this.host.rootUri()).map((row, index) => ({ kind: 'record', row, group: n.index, index }));
  }

  getParent(): undefined {
    return undefined;
  }
}

/** The location a Failures view node stands for (a record row), for commands run on it. */
export function failureLocation(arg: unknown): WireLocation | undefined {
  const n = arg as { kind?: string; row?: { location?: WireLocation } } | undefined;
  return n?.kind === 'record' ? n.row?.location : undefined;
}
