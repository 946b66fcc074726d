package lsp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap/zaptest"
)

// TestReplyOnce: a handler that replies twice, never, or panics gets exactly
// one reply out, and the process goes on (jsonrpc2.ReplyHandler would panic).
func TestReplyOnce(t *testing.T) {
	tests := []struct {
		name     string
		handler  jsonrpc2.Handler
		wantCode jsonrpc2.Code // 0: the handler's own result
	}{
		{"replies twice", func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
			_ = reply(ctx, "first", nil)
			return reply(ctx, "second", nil)
		}, 0},
		{"never replies", func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
			return nil
		}, jsonrpc2.InternalError},
		{"panics", func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
			panic("bug")
		}, jsonrpc2.InternalError},
		{"panics after replying", func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
			_ = reply(ctx, "first", nil)
			panic("bug")
		}, 0},
		{"uncoded error", func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
			return reply(ctx, nil, errors.New("disk on fire"))
		}, jsonrpc2.InternalError},
		{"parse error from protocol.ServerHandler", func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
			return reply(ctx, nil, errors.New(jsonrpc2.ErrParse.Message+": json: cannot unmarshal number into string"))
		}, jsonrpc2.InvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &server{logger: zaptest.NewLogger(t), ctx: context.Background()}
			var mu sync.Mutex
			var replies []any
			var codes []jsonrpc2.Code
			reply := func(ctx context.Context, result any, err error) error {
				mu.Lock()
				defer mu.Unlock()
				replies = append(replies, result)
				var we *jsonrpc2.Error
				if errors.As(err, &we) {
					codes = append(codes, we.Code)
				} else if err != nil {
					codes = append(codes, -1)
				} else {
					codes = append(codes, 0)
				}
				return nil
			}
			call, _ := jsonrpc2.NewCall(jsonrpc2.NewNumberID(1), "x", nil)
			r := &replyOnce{s: s, reply: reply, method: "x", cancelled: new(atomic.Bool)}
			s.invoke(context.Background(), r, call, tt.handler, true)
			if len(replies) != 1 {
				t.Fatalf("%d replies, want 1", len(replies))
			}
			if codes[0] != tt.wantCode {
				t.Errorf("reply code %d, want %d", codes[0], tt.wantCode)
			}
		})
	}
}
