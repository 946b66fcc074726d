// The two format warnings of spec §9 and where their documentation is. The server
// may send its own codeDescription; when it does not, the extension links the code to
// the section of its README that explains it.

export const WARNING_CODES = ['unfielded-line', 'unindented-continuation'] as const;
export type WarningCode = (typeof WARNING_CODES)[number];

/** README anchors (GitHub-style slugs of the headings in README.md). */
export const DOCS_ANCHOR: Record<WarningCode, string> = {
  'unfielded-line': 'unfielded-line',
  'unindented-continuation': 'unindented-continuation',
};

/** A diagnostic code as vscode.Diagnostic holds it. */
export type CodeValue = string | number | { value: string | number; target: unknown } | undefined;

/**
 * The README fragment for a runls diagnostic code, or undefined for codes that are
 * not ours or that already carry a link.
 */
export function docsFragment(code: CodeValue, source: string | undefined): string | undefined {
  if (source !== undefined && source !== 'runls') return undefined;
  if (typeof code !== 'string') return undefined;
  return (WARNING_CODES as readonly string[]).includes(code) ? DOCS_ANCHOR[code as WarningCode] : undefined;
}
