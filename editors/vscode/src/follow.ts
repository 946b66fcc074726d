// "runls: Follow File": the editor stays at the end of a file while it grows, as
// `tail -f` does. Following pauses when the user scrolls up from the end and resumes
// when the user scrolls back to it or runs the command again; the command on a file
// being followed (not paused) stops following it. It works the same for a
// conversation document (runls-conversation), which grows as its files do.

import * as vscode from 'vscode';

export const FOLLOW_COMMAND = 'runls.followFile';
export const FOLLOWING_CONTEXT = 'runls.following';

interface Followed {
  paused: boolean;
  /** The line count when the editor was last put at the end. */
  lines: number;
}

export class Follower implements vscode.Disposable {
  private readonly followed = new Map<string, Followed>();
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[];

  constructor() {
    this.item = vscode.window.createStatusBarItem('runls.follow', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'runls follow';
    this.item.command = FOLLOW_COMMAND;
    this.disposables = [
      this.item,
      vscode.commands.registerCommand(FOLLOW_COMMAND, () => this.toggle()),
      vscode.workspace.onDidChangeTextDocument((e) => this.onChanged(e.document)),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => this.onScrolled(e.textEditor, e.visibleRanges)),
      vscode.window.onDidChangeActiveTextEditor(() => this.render()),
      vscode.workspace.onDidCloseTextDocument((d) => {
        this.followed.delete(d.uri.toString());
        this.render();
      }),
    ];
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  /** Follows the active editor's document, resumes it when paused, or stops following it. */
  private toggle(): void {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return;
    const key = editor.document.uri.toString();
    const f = this.followed.get(key);
    if (f && !f.paused) {
      this.followed.delete(key);
    } else {
      this.followed.set(key, { paused: false, lines: editor.document.lineCount });
      this.toEnd(editor.document);
    }
    this.render();
  }

  private onChanged(doc: vscode.TextDocument): void {
    const f = this.followed.get(doc.uri.toString());
    if (!f || f.paused) return;
    this.toEnd(doc);
  }

  /**
   * Scrolling: at the end (the last line the file had when it was last put there, or
   * later) follows, above it pauses. A scroll that growth alone caused keeps the state.
   */
  private onScrolled(editor: vscode.TextEditor, ranges: readonly vscode.Range[]): void {
    const f = this.followed.get(editor.document.uri.toString());
    const last = ranges[ranges.length - 1];
    if (!f || !last) return;
    const paused = last.end.line < f.lines - 1;
    if (paused !== f.paused) {
      f.paused = paused;
      if (!paused) this.toEnd(editor.document);
      this.render();
    }
  }

  private toEnd(doc: vscode.TextDocument): void {
    const f = this.followed.get(doc.uri.toString());
    if (f) f.lines = doc.lineCount;
    const end = new vscode.Position(Math.max(doc.lineCount - 1, 0), 0);
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document !== doc) continue;
      editor.selection = new vscode.Selection(end, end);
      editor.revealRange(new vscode.Range(end, end), vscode.TextEditorRevealType.Default);
    }
  }

  private render(): void {
    const editor = vscode.window.activeTextEditor;
    const f = editor && this.followed.get(editor.document.uri.toString());
    void vscode.commands.executeCommand('setContext', FOLLOWING_CONTEXT, !!f && !f.paused);
    if (!f) {
      this.item.hide();
      return;
    }
    this.item.text = f.paused ? '$(debug-pause) runls: follow paused' : '$(debug-continue) runls: following';
    this.item.tooltip = f.paused ? 'Scroll to the end or click to follow again' : 'The editor stays at the end as the file grows; scroll up to pause, click to stop';
    this.item.show();
  }
}
