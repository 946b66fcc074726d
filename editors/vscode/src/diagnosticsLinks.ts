// The format warnings of spec §9 and where their documentation is. The server sends
// no codeDescription (it does not know where the extension's README is); the extension
// links each code to a command that opens the README rendered (Markdown preview) at
// the code's section: a link to the file itself would open its raw text at line 1
// (VS Code ignores a fragment that is not a line number in a file link).

export const WARNING_CODES = ['unfielded-line', 'unindented-continuation', 'more-warnings'] as const;
export type WarningCode = (typeof WARNING_CODES)[number];

/** README anchors (the preview's slugs of the headings in README.md). */
export const DOCS_ANCHOR: Record<WarningCode, string> = {
  'unfielded-line': 'unfielded-line',
  'unindented-continuation': 'unindented-continuation',
  'more-warnings': 'format-warnings',
};

/** The command the links run, with the anchor as its one argument. */
export const SHOW_DOCS_COMMAND = 'runls.showWarningDocs';

/** The view type of VS Code's built-in Markdown preview, as `vscode.openWith` takes it. */
export const MARKDOWN_PREVIEW = 'vscode.markdown.preview.editor';

/** A diagnostic code as vscode.Diagnostic holds it. */
export type CodeValue = string | number | { value: string | number; target: unknown } | undefined;

/**
 * The README anchor for a runls diagnostic code, or undefined for codes that are
 * not ours or that already carry a link.
 */
export function docsFragment(code: CodeValue, source: string | undefined): string | undefined {
  if (source !== undefined && source !== 'runls') return undefined;
  if (typeof code !== 'string') return undefined;
  return (WARNING_CODES as readonly string[]).includes(code) ? DOCS_ANCHOR[code as WarningCode] : undefined;
}

/** The `command:` URI (as text) that opens the README at `fragment`. */
export function docsCommandUri(fragment: string): string {
  return `command:${SHOW_DOCS_COMMAND}?${encodeURIComponent(JSON.stringify([fragment]))}`;
}
