package lsp

import (
	"context"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// The handlers implement every method of protocol.Server: the ones runls does
// not serve are here, so the interface stays complete as features are added.
// Requests answer "method not found"; notifications are accepted and do nothing.
var _ protocol.Server = handlers{}

func notServed(method string) error {
	return jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "runls: method not served: %s", method)
}

func (handlers) LogTrace(ctx context.Context, params *protocol.LogTraceParams) (err error) {
	return nil
}

func (handlers) CodeAction(ctx context.Context, params *protocol.CodeActionParams) (result []protocol.CodeAction, err error) {
	return nil, notServed("CodeAction")
}

func (handlers) CodeLens(ctx context.Context, params *protocol.CodeLensParams) (result []protocol.CodeLens, err error) {
	return nil, notServed("CodeLens")
}

func (handlers) CodeLensResolve(ctx context.Context, params *protocol.CodeLens) (result *protocol.CodeLens, err error) {
	return nil, notServed("CodeLensResolve")
}

func (handlers) ColorPresentation(ctx context.Context, params *protocol.ColorPresentationParams) (result []protocol.ColorPresentation, err error) {
	return nil, notServed("ColorPresentation")
}

func (handlers) Completion(ctx context.Context, params *protocol.CompletionParams) (result *protocol.CompletionList, err error) {
	return nil, notServed("Completion")
}

func (handlers) CompletionResolve(ctx context.Context, params *protocol.CompletionItem) (result *protocol.CompletionItem, err error) {
	return nil, notServed("CompletionResolve")
}

func (handlers) Declaration(ctx context.Context, params *protocol.DeclarationParams) (result []protocol.Location, err error) {
	return nil, notServed("Declaration")
}

func (handlers) Definition(ctx context.Context, params *protocol.DefinitionParams) (result []protocol.Location, err error) {
	return nil, notServed("Definition")
}

func (handlers) DidChange(ctx context.Context, params *protocol.DidChangeTextDocumentParams) (err error) {
	return nil
}

func (handlers) DidChangeWatchedFiles(ctx context.Context, params *protocol.DidChangeWatchedFilesParams) (err error) {
	return nil
}

func (handlers) DidChangeWorkspaceFolders(ctx context.Context, params *protocol.DidChangeWorkspaceFoldersParams) (err error) {
	return nil
}

func (handlers) DidSave(ctx context.Context, params *protocol.DidSaveTextDocumentParams) (err error) {
	return nil
}

func (handlers) DocumentColor(ctx context.Context, params *protocol.DocumentColorParams) (result []protocol.ColorInformation, err error) {
	return nil, notServed("DocumentColor")
}

func (handlers) DocumentHighlight(ctx context.Context, params *protocol.DocumentHighlightParams) (result []protocol.DocumentHighlight, err error) {
	return nil, notServed("DocumentHighlight")
}

func (handlers) DocumentLink(ctx context.Context, params *protocol.DocumentLinkParams) (result []protocol.DocumentLink, err error) {
	return nil, notServed("DocumentLink")
}

func (handlers) DocumentLinkResolve(ctx context.Context, params *protocol.DocumentLink) (result *protocol.DocumentLink, err error) {
	return nil, notServed("DocumentLinkResolve")
}

func (handlers) ExecuteCommand(ctx context.Context, params *protocol.ExecuteCommandParams) (result interface{}, err error) {
	return nil, notServed("ExecuteCommand")
}

func (handlers) Formatting(ctx context.Context, params *protocol.DocumentFormattingParams) (result []protocol.TextEdit, err error) {
	return nil, notServed("Formatting")
}

func (handlers) Implementation(ctx context.Context, params *protocol.ImplementationParams) (result []protocol.Location, err error) {
	return nil, notServed("Implementation")
}

func (handlers) OnTypeFormatting(ctx context.Context, params *protocol.DocumentOnTypeFormattingParams) (result []protocol.TextEdit, err error) {
	return nil, notServed("OnTypeFormatting")
}

func (handlers) PrepareRename(ctx context.Context, params *protocol.PrepareRenameParams) (result *protocol.Range, err error) {
	return nil, notServed("PrepareRename")
}

func (handlers) RangeFormatting(ctx context.Context, params *protocol.DocumentRangeFormattingParams) (result []protocol.TextEdit, err error) {
	return nil, notServed("RangeFormatting")
}

func (handlers) References(ctx context.Context, params *protocol.ReferenceParams) (result []protocol.Location, err error) {
	return nil, notServed("References")
}

func (handlers) Rename(ctx context.Context, params *protocol.RenameParams) (result *protocol.WorkspaceEdit, err error) {
	return nil, notServed("Rename")
}

func (handlers) SignatureHelp(ctx context.Context, params *protocol.SignatureHelpParams) (result *protocol.SignatureHelp, err error) {
	return nil, notServed("SignatureHelp")
}

func (handlers) TypeDefinition(ctx context.Context, params *protocol.TypeDefinitionParams) (result []protocol.Location, err error) {
	return nil, notServed("TypeDefinition")
}

func (handlers) WillSave(ctx context.Context, params *protocol.WillSaveTextDocumentParams) (err error) {
	return nil
}

func (handlers) WillSaveWaitUntil(ctx context.Context, params *protocol.WillSaveTextDocumentParams) (result []protocol.TextEdit, err error) {
	return nil, notServed("WillSaveWaitUntil")
}

func (handlers) ShowDocument(ctx context.Context, params *protocol.ShowDocumentParams) (result *protocol.ShowDocumentResult, err error) {
	return nil, notServed("ShowDocument")
}

func (handlers) WillCreateFiles(ctx context.Context, params *protocol.CreateFilesParams) (result *protocol.WorkspaceEdit, err error) {
	return nil, notServed("WillCreateFiles")
}

func (handlers) DidCreateFiles(ctx context.Context, params *protocol.CreateFilesParams) (err error) {
	return nil
}

func (handlers) WillRenameFiles(ctx context.Context, params *protocol.RenameFilesParams) (result *protocol.WorkspaceEdit, err error) {
	return nil, notServed("WillRenameFiles")
}

func (handlers) DidRenameFiles(ctx context.Context, params *protocol.RenameFilesParams) (err error) {
	return nil
}

func (handlers) WillDeleteFiles(ctx context.Context, params *protocol.DeleteFilesParams) (result *protocol.WorkspaceEdit, err error) {
	return nil, notServed("WillDeleteFiles")
}

func (handlers) DidDeleteFiles(ctx context.Context, params *protocol.DeleteFilesParams) (err error) {
	return nil
}

func (handlers) CodeLensRefresh(ctx context.Context) (err error) {
	return nil
}

func (handlers) PrepareCallHierarchy(ctx context.Context, params *protocol.CallHierarchyPrepareParams) (result []protocol.CallHierarchyItem, err error) {
	return nil, notServed("PrepareCallHierarchy")
}

func (handlers) IncomingCalls(ctx context.Context, params *protocol.CallHierarchyIncomingCallsParams) (result []protocol.CallHierarchyIncomingCall, err error) {
	return nil, notServed("IncomingCalls")
}

func (handlers) OutgoingCalls(ctx context.Context, params *protocol.CallHierarchyOutgoingCallsParams) (result []protocol.CallHierarchyOutgoingCall, err error) {
	return nil, notServed("OutgoingCalls")
}

func (handlers) SemanticTokensFull(ctx context.Context, params *protocol.SemanticTokensParams) (result *protocol.SemanticTokens, err error) {
	return nil, notServed("SemanticTokensFull")
}

func (handlers) SemanticTokensFullDelta(ctx context.Context, params *protocol.SemanticTokensDeltaParams) (result interface{}, err error) {
	return nil, notServed("SemanticTokensFullDelta")
}

func (handlers) SemanticTokensRange(ctx context.Context, params *protocol.SemanticTokensRangeParams) (result *protocol.SemanticTokens, err error) {
	return nil, notServed("SemanticTokensRange")
}

func (handlers) SemanticTokensRefresh(ctx context.Context) (err error) {
	return nil
}

func (handlers) LinkedEditingRange(ctx context.Context, params *protocol.LinkedEditingRangeParams) (result *protocol.LinkedEditingRanges, err error) {
	return nil, notServed("LinkedEditingRange")
}

func (handlers) Moniker(ctx context.Context, params *protocol.MonikerParams) (result []protocol.Moniker, err error) {
	return nil, notServed("Moniker")
}

// Request is called by protocol.ServerHandler for methods it does not know.
// handle routes none there, but answer right if that changes.
func (handlers) Request(ctx context.Context, method string, params interface{}) (interface{}, error) {
	return nil, notServed(method)
}
