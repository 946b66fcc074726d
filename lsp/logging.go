package lsp

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// engineLogger is the engine's logger: the server's log, and WARN and above
// also to the client as window/logMessage (spec §9: the WARNs of §1 and §5
// reach the user).
func (s *server) engineLogger() *zap.Logger {
	return s.logger.Named("engine").WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewTee(c, &clientCore{s: s})
	}))
}

// clientCore is a zap core that sends WARN and above to the client.
type clientCore struct {
	s      *server
	fields []zapcore.Field
}

func (c *clientCore) Enabled(l zapcore.Level) bool { return l >= zapcore.WarnLevel }

func (c *clientCore) With(fields []zapcore.Field) zapcore.Core {
	return &clientCore{s: c.s, fields: append(append([]zapcore.Field(nil), c.fields...), fields...)}
}

func (c *clientCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *clientCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fields {
		f.AddTo(enc)
	}
	keys := make([]string, 0, len(enc.Fields))
	for k := range enc.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("runls: ")
	b.WriteString(e.Message)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%v", k, enc.Fields[k])
	}
	typ := protocol.MessageTypeWarning
	if e.Level >= zapcore.ErrorLevel {
		typ = protocol.MessageTypeError
	}
	// The server's own logger reports a failure to send; it does not come back here.
	if err := c.s.client.LogMessage(context.WithoutCancel(c.s.ctx), &protocol.LogMessageParams{Type: typ, Message: b.String()}); err != nil {
		c.s.logger.Debug("window/logMessage", zap.Error(err))
	}
	return nil
}

func (c *clientCore) Sync() error { return nil }
