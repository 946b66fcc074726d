package retriever

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"syscall"
)

// Interpreter is a configured record interpreter: rules tried in order
// against a record's evidence text; the first that matches decides (spec §3).
type Interpreter struct {
	rules  []rule
	source []byte // the JSON it was parsed from: its cache entry's configuration
}

type rule struct {
	re      *regexp.Regexp
	reading Reading
	text    int // index of the named group "text", or -1
}

type ruleJSON struct {
	Match   *string `json:"match"`
	Reading *string `json:"reading"`
}

// ParseInterpreter loads rules from JSON ({"rules": [{"match", "reading"}]});
// a bad rule is an error naming it by its index.
func ParseInterpreter(data []byte) (*Interpreter, error) {
	var doc struct {
		Rules *[]json.RawMessage `json:"rules"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("interpreter: not a JSON object with rules: %w", err)
	}
	if doc.Rules == nil {
		return nil, fmt.Errorf(`interpreter: no "rules" list`)
	}
	in := Interpreter{source: slices.Clone(data)}
	for i, raw := range *doc.Rules {
		var rj ruleJSON
		if err := json.Unmarshal(raw, &rj); err != nil {
			return nil, fmt.Errorf("interpreter: rule %d: %w", i, err)
		}
		if rj.Match == nil {
			return nil, fmt.Errorf(`interpreter: rule %d: no "match"`, i)
		}
		if rj.Reading == nil {
			return nil, fmt.Errorf(`interpreter: rule %d: no "reading"`, i)
		}
		re, err := regexp.Compile(*rj.Match)
		if err != nil {
			return nil, fmt.Errorf("interpreter: rule %d: match %q: %w", i, *rj.Match, err)
		}
		reading := Reading(*rj.Reading)
		switch reading {
		case ReadingNote, ReadingTold, ReadingSaid, ReadingLeftOut:
		default:
			return nil, fmt.Errorf(`interpreter: rule %d: reading %q: want "note", "told", "said" or "leftOut"`, i, *rj.Reading)
		}
		in.rules = append(in.rules, rule{re: re, reading: reading, text: re.SubexpIndex("text")})
	}
	return &in, nil
}

// Read tells what a record with evidence text means, and where in text its
// message is (the whole text unless a rule's group "text" says otherwise).
func (in *Interpreter) Read(text string) (reading Reading, start, end int) {
	reading, start, end, _ = in.readRule(text)
	return reading, start, end
}

// readRule is Read that also tells which rule decided (its index; -1: none).
func (in *Interpreter) readRule(text string) (reading Reading, start, end, rule int) {
	if in != nil {
		for i, r := range in.rules {
			m := r.re.FindStringSubmatchIndex(text)
			if m == nil {
				continue
			}
			if r.text >= 0 && m[2*r.text] >= 0 {
				return r.reading, m[2*r.text], m[2*r.text+1], i
			}
			return r.reading, 0, len(text), i
		}
	}
	return ReadingNote, 0, len(text), -1
}

// maxRulesBytes bounds a rules file: rules are a few lines of JSON.
const maxRulesBytes = 1 << 20

// LoadInterpreter reads rules from a JSON file (ReadRules) and parses them.
func LoadInterpreter(path string) (*Interpreter, error) {
	data, err := ReadRules(path)
	if err != nil {
		return nil, err
	}
	return ParseInterpreter(data)
}

// ReadRules reads a rules file. It must be a regular file; it is opened
// without blocking, so a FIFO named by mistake is an error and not a wait
// without end.
func ReadRules(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("interpreter: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("interpreter: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("interpreter: %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRulesBytes+1))
	if err != nil {
		return nil, fmt.Errorf("interpreter: %w", err)
	}
	if len(data) > maxRulesBytes {
		return nil, fmt.Errorf("interpreter: %s is larger than %d bytes", path, maxRulesBytes)
	}
	return data, nil
}
