package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"runls/retriever"
)

// SettingsKey is the key under which the settings are given, in
// initializationOptions and in workspace/didChangeConfiguration's settings.
const SettingsKey = "runls"

// Masking settings.
const (
	MaskingOff           = "off"
	MaskingHidingOutside = "hidingOutside"
)

// Settings are the editor's settings (spec §9). The request fields (agent to
// topK) are the defaults of run/search; the others shape the index.
//
// Each workspace/didChangeConfiguration gives the whole runls section, as VS
// Code sends it: a field it does not hold goes back to its default. A field
// with a bad value keeps its previous value, and the client is told which.
type Settings struct {
	Agent        string `json:"agent,omitempty"`
	Episode      string `json:"episode,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	Scope        string `json:"scope,omitempty"`
	TopK         int    `json:"topK,omitempty"`
	// Masking is "off" (the default) or "hidingOutside".
	Masking string `json:"masking,omitempty"`
	// Interpreter is the rules object of spec §3 ({"rules": [...]}), or a
	// string: the path of a JSON file holding it, absolute or relative to the
	// run folder. Absent, null or "": every record is a note.
	Interpreter json.RawMessage `json:"interpreter,omitempty"`
	// MaxDiagnosticsPerFile caps each file's diagnostics (spec §9, revision
	// 3): nil, the default (retriever.DefaultMaxDiagnostics); 0 publishes
	// none, Hints included.
	MaxDiagnosticsPerFile *int `json:"maxDiagnosticsPerFile,omitempty"`
	// IgnoreDiagnostics lists diagnostic codes left out of what is
	// published (runls' own setting: a reader who cannot act on a code
	// turns it off), e.g. ["unindented-continuation"].
	IgnoreDiagnostics []string `json:"ignoreDiagnostics,omitempty"`

	// interpreter is Interpreter loaded, and interpreterSource the rules text
	// it was loaded from (a file's content is read when the setting is applied).
	interpreter       *retriever.Interpreter
	interpreterSource string
}

func defaultSettings() Settings { return Settings{Masking: MaskingOff} }

// request returns the settings' request fields.
func (st Settings) request() retriever.Request {
	return retriever.Request{
		Agent:        st.Agent,
		Episode:      st.Episode,
		Conversation: st.Conversation,
		Scope:        st.Scope,
		TopK:         st.TopK,
	}
}

// sameIndex reports whether two settings give the same index.
func (st Settings) sameIndex(o Settings) bool {
	return st.Masking == o.Masking && st.interpreterSource == o.interpreterSource
}

// diagnosticsShown is how the settings shape the published diagnostics.
type diagnosticsShown struct {
	max      int // 0: none
	leaveOut []string
}

func (st Settings) diagnostics() diagnosticsShown {
	d := diagnosticsShown{max: retriever.DefaultMaxDiagnostics, leaveOut: st.IgnoreDiagnostics}
	if st.MaxDiagnosticsPerFile != nil {
		d.max = *st.MaxDiagnosticsPerFile
	}
	return d
}

func (d diagnosticsShown) equal(o diagnosticsShown) bool {
	return d.max == o.max && slices.Equal(d.leaveOut, o.leaveOut)
}

// parseSettings reads the runls section (raw: the JSON object) on top of
// defaults, falling back to prev field by field where a value is bad. root is
// the run folder, for interpreter paths. The errors name each bad field.
func parseSettings(raw json.RawMessage, prev Settings, root string) (Settings, []error) {
	st := defaultSettings()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return st, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return prev, []error{&settingError{reason: "must be an object", err: fmt.Errorf("must be an object: %w", err)}}
	}
	var errs []error
	// reason says why without the value; err may name it.
	bad := func(name, reason string, err error) {
		errs = append(errs, &settingError{name: name, reason: reason, err: err})
	}
	str := func(name string, dst *string, old string) {
		v, ok := fields[name]
		if !ok || isNull(v) {
			return
		}
		if err := json.Unmarshal(v, dst); err != nil {
			bad(name, "must be a string", fmt.Errorf("%s must be a string", clipValue(v)))
			*dst = old
		}
	}
	num := func(name string, dst *int, old int) {
		v, ok := fields[name]
		if !ok || isNull(v) {
			return
		}
		if err := json.Unmarshal(v, dst); err != nil {
			bad(name, "must be an integer", fmt.Errorf("%s must be an integer", clipValue(v)))
			*dst = old
		}
	}
	str("agent", &st.Agent, prev.Agent)
	str("episode", &st.Episode, prev.Episode)
	str("conversation", &st.Conversation, prev.Conversation)
	str("scope", &st.Scope, prev.Scope)
	num("topK", &st.TopK, prev.TopK)
	str("masking", &st.Masking, prev.Masking)
	if v, ok := fields["maxDiagnosticsPerFile"]; ok && !isNull(v) {
		var n int
		switch err := json.Unmarshal(v, &n); {
		case err != nil:
			bad("maxDiagnosticsPerFile", "must be an integer", errors.New("must be an integer"))
			st.MaxDiagnosticsPerFile = prev.MaxDiagnosticsPerFile
		case n < 0:
			bad("maxDiagnosticsPerFile", "is negative", fmt.Errorf("%d is negative", n))
			st.MaxDiagnosticsPerFile = prev.MaxDiagnosticsPerFile
		default:
			st.MaxDiagnosticsPerFile = &n
		}
	}
	if v, ok := fields["ignoreDiagnostics"]; ok && !isNull(v) {
		var codes []string
		if err := json.Unmarshal(v, &codes); err != nil {
			bad("ignoreDiagnostics", "must be a list of codes", errors.New("must be a list of codes"))
			st.IgnoreDiagnostics = prev.IgnoreDiagnostics
		} else if c, ok := unknownCode(codes); ok {
			reason := "names an unknown code: want " + strings.Join(retriever.DiagnosticCodes, ", ")
			bad("ignoreDiagnostics", reason, fmt.Errorf("%q %s", c, reason))
			st.IgnoreDiagnostics = prev.IgnoreDiagnostics
		} else {
			st.IgnoreDiagnostics = codes
		}
	}

	// The request fields are checked by the engine's own rules, one at a time
	// so that each bad one is named and only it falls back.
	for _, f := range []struct {
		name string
		set  func(*retriever.Request)
		undo func()
	}{
		{"agent", func(r *retriever.Request) { r.Agent = st.Agent }, func() { st.Agent = prev.Agent }},
		{"episode", func(r *retriever.Request) { r.Episode = st.Episode }, func() { st.Episode = prev.Episode }},
		{"conversation", func(r *retriever.Request) { r.Conversation = st.Conversation }, func() { st.Conversation = prev.Conversation }},
		{"scope", func(r *retriever.Request) { r.Scope = st.Scope }, func() { st.Scope = prev.Scope }},
		{"topK", func(r *retriever.Request) { r.TopK = st.TopK }, func() { st.TopK = prev.TopK }},
	} {
		var r retriever.Request
		f.set(&r)
		if err := r.Validate(); err != nil {
			reason := "is not valid"
			var fe *retriever.FieldError
			if errors.As(err, &fe) {
				reason = fe.Reason
			}
			bad(f.name, reason, err)
			f.undo()
		}
	}
	if st.TopK < 0 {
		bad("topK", "is out of range", fmt.Errorf("%d is out of range", st.TopK))
		st.TopK = prev.TopK
	}
	if st.Masking == "" {
		st.Masking = MaskingOff
	}
	if st.Masking != MaskingOff && st.Masking != MaskingHidingOutside {
		reason := fmt.Sprintf("is neither %q nor %q", MaskingOff, MaskingHidingOutside)
		bad("masking", reason, fmt.Errorf("%q %s", st.Masking, reason))
		st.Masking = prev.Masking
	}

	if v, ok := fields["interpreter"]; ok && !isNull(v) {
		interp, source, err := loadInterpreter(v, root)
		if err != nil {
			bad("interpreter", interpreterReason(err), err)
			st.Interpreter, st.interpreter, st.interpreterSource = prev.Interpreter, prev.interpreter, prev.interpreterSource
		} else {
			st.Interpreter, st.interpreter, st.interpreterSource = append(json.RawMessage(nil), v...), interp, source
		}
	}

	var unknown []string
	for k := range fields {
		switch k {
		case "agent", "episode", "conversation", "scope", "topK", "masking", "interpreter", "maxDiagnosticsPerFile", "ignoreDiagnostics":
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		// Editors put their own keys in the section (VS Code: trace.server).
		errs = append(errs, ignoredKeys(unknown))
	}
	return st, errs
}

// settingError rejects one setting. Its Error, shown to the user, may name
// the value (the user sees what is wrong); the log gets only the name and
// reason, since a value can hold a secret (a conversation id, a path, a
// token pasted into the wrong field).
type settingError struct {
	name   string
	reason string // why, without the value
	err    error  // the whole cause
}

func (e *settingError) Error() string {
	if e.name == "" {
		return fmt.Sprintf("settings %q: %v", SettingsKey, e.err)
	}
	return fmt.Sprintf("setting %s.%s: %v", SettingsKey, e.name, e.err)
}

// key names the setting in the log.
func (e *settingError) key() string {
	if e.name == "" {
		return SettingsKey
	}
	return SettingsKey + "." + e.name
}

func (e *settingError) Unwrap() error { return e.err }

// interpreterReason says why the interpreter setting was refused without
// its rules or path, which retriever's errors quote.
func interpreterReason(err error) string {
	var pe *fs.PathError
	switch {
	case errors.Is(err, errRelativeRules):
		return errRelativeRules.Error()
	case errors.Is(err, errNotRules):
		return errNotRules.Error()
	case errors.As(err, &pe):
		return "the rules file cannot be read: " + pe.Err.Error()
	case errors.Is(err, errReadingRules):
		return "the rules file cannot be read"
	}
	return "the rules are not valid"
}

var (
	errRelativeRules = errors.New("a relative path without a run folder")
	errNotRules      = errors.New("must be a rules object or the path of a JSON file")
	errReadingRules  = errors.New("reading rules")
)

// ignoredKeys is not a user error: it is only logged.
type ignoredKeys []string

func (k ignoredKeys) Error() string { return "ignored settings: " + strings.Join(k, ", ") }

// loadInterpreter reads the interpreter setting: the rules object, or a path.
func loadInterpreter(v json.RawMessage, root string) (*retriever.Interpreter, string, error) {
	var data []byte
	var path string
	if json.Unmarshal(v, &path) == nil {
		if path == "" {
			return nil, "", nil
		}
		if !filepath.IsAbs(path) {
			if root == "" {
				return nil, "", fmt.Errorf("%w: %q", errRelativeRules, path)
			}
			path = filepath.Join(root, path)
		}
		b, err := retriever.ReadRules(path)
		if err != nil {
			return nil, "", fmt.Errorf("%w: %w", errReadingRules, err)
		}
		data = b
	} else {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(v, &obj); err != nil {
			return nil, "", errNotRules
		}
		data = v
	}
	interp, err := retriever.ParseInterpreter(data)
	if err != nil {
		return nil, "", err
	}
	var compact bytes.Buffer
	if json.Compact(&compact, data) != nil {
		compact.Reset()
		compact.Write(data)
	}
	return interp, compact.String(), nil
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// sectionOf picks the runls section out of a settings value (any JSON shape).
func sectionOf(settings any) (json.RawMessage, bool, error) {
	if settings == nil {
		return nil, false, nil
	}
	raw, err := json.Marshal(settings)
	if err != nil {
		return nil, false, fmt.Errorf("encoding settings: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, false, nil // not an object: nothing for runls
	}
	sec, ok := top[SettingsKey]
	return sec, ok, nil
}

// applySettings makes new settings current, reopening the index when they
// change it, and tells the client which fields were refused.
func (s *server) applySettings(ctx context.Context, raw json.RawMessage) {
	s.mu.Lock()
	prev := s.settings
	root := s.root
	st, errs := parseSettings(raw, prev, root)
	s.settings = st
	reopen := s.state == stateInitialized && s.started && !st.sameIndex(prev)
	republish := s.state == stateInitialized && s.started && !reopen && !st.diagnostics().equal(prev.diagnostics())
	s.mu.Unlock()

	var msgs []string
	for _, err := range errs {
		var ik ignoredKeys
		var se *settingError
		switch {
		case errors.As(err, &ik):
			s.logger.Debug("settings", zap.Error(err))
			continue
		case errors.As(err, &se):
			s.logger.Warn("a setting was refused: the previous value is kept",
				zap.String("setting", se.key()), zap.String("reason", se.reason))
		default:
			s.logger.Warn("settings", zap.Error(err))
		}
		msgs = append(msgs, err.Error())
	}
	if len(msgs) > 0 {
		s.showMessage(ctx, protocol.MessageTypeWarning, "runls: "+strings.Join(msgs, "; ")+" (the previous value is kept)")
	}
	if reopen {
		s.logger.Info("settings change the index: reopening it")
		s.startGeneration()
	}
	if republish {
		s.republish()
	}
}

// unknownCode returns the first of codes that is no diagnostic code.
func unknownCode(codes []string) (string, bool) {
	for _, c := range codes {
		if !slices.Contains(retriever.DiagnosticCodes, c) {
			return c, true
		}
	}
	return "", false
}

// showMessage tells the user something through window/showMessage.
func (s *server) showMessage(ctx context.Context, typ protocol.MessageType, msg string) {
	if err := s.client.ShowMessage(context.WithoutCancel(ctx), &protocol.ShowMessageParams{Type: typ, Message: msg}); err != nil {
		s.logger.Warn("window/showMessage", zap.Error(err))
	}
}
