package lsp

// ReadFrame lets the external tests read framed messages as stream_test does.
var ReadFrame = readFrame
