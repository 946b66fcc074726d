package recordformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestJSONLine(t *testing.T) {
	tests := []struct {
		line  string
		ok    bool
		prose string
		time  string
		level Level
		role  Role
	}{
		{`{"msg":"a"}`, true, "a", "", None, RoleNone},
		{`  {"msg" : "a" , "n":-1.5e+3}  `, true, "a", "", None, RoleNone},
		{`{"msg":"a"} x`, false, "", "", None, RoleNone},
		{`{"msg":"a"`, false, "", "", None, RoleNone},
		{`{"msg":"a\q"}`, false, "", "", None, RoleNone},
		{`{"msg":01}`, false, "", "", None, RoleNone},
		{`{"msg":tru}`, false, "", "", None, RoleNone},
		{`["msg","a"]`, false, "", "", None, RoleNone},
		{`{"a":{"b":[{"text":"deep"}]},"content":["x","",{"k":"not prose"}]}`, true, "deep\nx", "", None, RoleNone},
		{`{"msg":"\u00e9\ud83d\ude00\ud800x\"\\\/\t"}`, true, "é😀\uFFFDx\"\\/\t", "", None, RoleNone},
		{`{"message":{"role":"assistant","content":"hi"},"type":"user"}`, true, "hi", "", None, RoleAssistant},
		{`{"type":"user","message":{"content":"hi"}}`, true, "hi", "", None, RoleUser},
		{`{"payload":{"type":"user_message","message":"hi"}}`, true, "hi", "", None, RoleUser},
		{`{"x":{"type":"user"}}`, true, "", "", None, RoleNone},
		{`{"time":"2026-03-02T12:00:00.5+01:00","level":"warning","event":"e"}`, true, "e", "2026-03-02 12:00:00.500", Warn, RoleNone},
		{`{"ts":1772445600,"level":60}`, true, "", "2026-03-02 10:00:00", Error, RoleNone},
		{`{"nested":{"time":"2026-03-02 12:00:00","event":"not top"}}`, true, "", "", None, RoleNone},
		{`{"output":"{\"output\":\"ok\\n\",\"metadata\":{\"exit_code\":0}}"}`, true, "ok\n", "", None, RoleNone},
		{`{"output":"{\"exit_code\":0}","msg":"m"}`, true, "m", "", None, RoleNone},
	}
	for _, tt := range tests {
		f, ok := JSONLine([]byte(tt.line))
		if ok != tt.ok {
			t.Errorf("JSONLine(%s): ok %v, want %v", tt.line, ok, tt.ok)
			continue
		}
		if got := string(Prose(nil, []byte(tt.line))); got != tt.prose {
			t.Errorf("Prose(%s) = %q, want %q", tt.line, got, tt.prose)
		}
		if !ok {
			continue
		}
		if got := KeyText(f.Time); got != tt.time || f.Level != tt.level || f.Role != tt.role {
			t.Errorf("JSONLine(%s) = %q %v %v, want %q %v %v", tt.line, got, f.Level, f.Role, tt.time, tt.level, tt.role)
		}
	}
	deep := strings.Repeat(`{"a":`, maxJSONDepth+1) + "1" + strings.Repeat("}", maxJSONDepth+1)
	if _, ok := JSONLine([]byte(deep)); ok {
		t.Error("a line nested past maxJSONDepth is read as JSON")
	}
	if got := string(Prose([]byte("kept"), []byte(`{"msg":"a"}`))); got != "kepta" {
		t.Errorf("Prose appends to dst: %q", got)
	}
}

// referenceProse is the prose of a JSON line read with encoding/json's
// tokens: the rule of jsonline.go written plainly, for the differential
// fuzz test.
func referenceProse(line []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var parts []string
	var walk func(depth int, key string, inProse bool) error
	walk = func(depth int, key string, inProse bool) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' {
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					if err := walk(depth+1, k.(string), false); err != nil {
						return err
					}
				}
			} else {
				prose := key != "" && isProseKey([]byte(key), depth)
				for dec.More() {
					if err := walk(depth+1, "", prose); err != nil {
						return err
					}
				}
			}
			_, err = dec.Token()
			return err
		case string:
			if v != "" && (inProse || (key != "" && isProseKey([]byte(key), depth))) {
				if IsJSONObject([]byte(v)) && json.Valid([]byte(v)) {
					if inner, ok := referenceProse([]byte(v)); ok {
						if inner != "" {
							parts = append(parts, inner)
						}
						return nil
					}
				}
				parts = append(parts, v)
			}
		}
		return nil
	}
	if err := walk(0, "", false); err != nil {
		return "", false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", false
	}
	return strings.Join(parts, "\n"), true
}

// FuzzJSONLine: no input panics; every valid JSON object is read as one,
// with the prose encoding/json's tokens give.
func FuzzJSONLine(f *testing.F) {
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a\nb"}]},"timestamp":"2026-03-02T13:00:00Z"}`))
	f.Add([]byte(`{"level":50,"time":1772452801456,"err":{"message":"x"},"msg":"y"}`))
	f.Add([]byte(`{"output":"{\"output\":\"ok\"}","text":"\ud800\u0041"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		facts, ok := JSONLine(line)
		prose := Prose(nil, line)
		if !ok && len(prose) > 0 {
			t.Fatalf("prose %q of a line that is not JSON", prose)
		}
		if facts.Time != NoTime && KeyText(facts.Time) == "" {
			t.Fatalf("time %d", facts.Time)
		}
		if !IsJSONObject(line) || !json.Valid(line) || bytes.Count(line, []byte("{"))+bytes.Count(line, []byte("[")) > maxJSONDepth {
			return
		}
		if !ok {
			t.Fatalf("a valid JSON object is not read as one: %s", line)
		}
		if want, _ := referenceProse(line); ValidText(prose) != want {
			t.Fatalf("prose %q, want %q", prose, want)
		}
	})
}
