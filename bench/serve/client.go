//go:build linux

package main

// A small LSP client over a child process's stdin and stdout, as an editor
// speaks to a language server: Content-Length framing, requests with numeric
// ids, every request of the server answered (with a null result), and the
// notifications the benchmark waits for ($/progress) handed to a callback.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"
)

type message struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *rpcError        `json:"error,omitempty"`

	readAt time.Time // when its body was read whole, before it was decoded
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// client is one connection. call may be used by one goroutine at a time.
type client struct {
	w      io.Writer
	wmu    sync.Mutex
	nextID int64

	mu      sync.Mutex
	pending map[int64]chan *message
	closed  error

	notify func(method string, params json.RawMessage)
}

func newClient(r io.Reader, w io.Writer, notify func(string, json.RawMessage)) *client {
	c := &client{w: w, pending: map[int64]chan *message{}, notify: notify}
	go c.read(bufio.NewReaderSize(r, 1<<20))
	return c
}

// call sends a request and waits for its answer; rpcErr is the server's
// error answer, err a broken connection or a timeout.
func (c *client) call(method string, params any, timeout time.Duration) (result json.RawMessage, rpcErr *rpcError, err error) {
	result, rpcErr, _, err = c.callTimed(method, params, timeout)
	return result, rpcErr, err
}

// callTimed is call, also saying when the answer's body was read whole
// (before the client decoded it).
func (c *client) callTimed(method string, params any, timeout time.Duration) (result json.RawMessage, rpcErr *rpcError, readAt time.Time, err error) {
	ch := make(chan *message, 1)
	c.mu.Lock()
	if c.closed != nil {
		c.mu.Unlock()
		return nil, nil, time.Time{}, c.closed
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	raw := json.RawMessage(strconv.FormatInt(id, 10))
	if err := c.send(message{JSONRPC: "2.0", ID: &raw, Method: method, Params: mustJSON(params)}); err != nil {
		return nil, nil, time.Time{}, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-ch:
		if m == nil {
			return nil, nil, time.Time{}, c.err()
		}
		return m.Result, m.Error, m.readAt, nil
	case <-t.C:
		return nil, nil, time.Time{}, fmt.Errorf("%s: no answer within %v", method, timeout)
	}
}

// notification sends a notification.
func (c *client) notification(method string, params any) error {
	return c.send(message{JSONRPC: "2.0", Method: method, Params: mustJSON(params)})
}

func (c *client) send(m message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	frame := make([]byte, 0, len(body)+32)
	frame = append(frame, "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(len(body)), 10)
	frame = append(frame, "\r\n\r\n"...)
	frame = append(frame, body...)
	_, err = c.w.Write(frame)
	return err
}

func (c *client) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *client) read(r *bufio.Reader) {
	tp := textproto.NewReader(r)
	var err error
	for {
		var h textproto.MIMEHeader
		h, err = tp.ReadMIMEHeader()
		if err != nil {
			break
		}
		n, cerr := strconv.Atoi(strings.TrimSpace(h.Get("Content-Length")))
		if cerr != nil || n < 0 {
			err = fmt.Errorf("bad Content-Length %q", h.Get("Content-Length"))
			break
		}
		body := make([]byte, n)
		if _, err = io.ReadFull(r, body); err != nil {
			break
		}
		readAt := time.Now()
		var m message
		if err = json.Unmarshal(body, &m); err != nil {
			break
		}
		m.readAt = readAt
		switch {
		case m.Method != "" && m.ID != nil:
			// A request of the server (window/workDoneProgress/create, ...).
			_ = c.send(message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage("null")})
		case m.Method != "":
			if c.notify != nil {
				c.notify(m.Method, m.Params)
			}
		case m.ID != nil:
			id, perr := strconv.ParseInt(string(*m.ID), 10, 64)
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if perr == nil && ch != nil {
				ch <- &m
			}
		}
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("the server closed its output")
	}
	c.mu.Lock()
	c.closed = fmt.Errorf("connection: %w", err)
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
}

func mustJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the benchmark's own params: a bug
	}
	return b
}
