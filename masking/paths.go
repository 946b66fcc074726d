package masking

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PathRedactor hides local file paths outside a run folder behind
// PathPlaceholder: absolute POSIX paths (/etc/passwd), home paths (~/x, ~bob/x,
// $HOME/x, ${HOME}/x), Windows drive paths (C:\Users\x, C:/x), UNC paths
// (\\server\share) and file:// URIs. A path is kept when, cleaned, it lies in
// the run folder (so /run/x/../../etc is hidden). It is safe for concurrent use.
//
// Paths are recognised by hand rather than by a regular expression: a path
// needs a boundary before it, its cleaned form compared with the run folder,
// and (on Windows) spaces inside it, and a byte scan does this at memory speed.
//
// Known limits: a POSIX path stops at white space, so the words after a space
// in "/Users/Jane Doe/x" stay (Windows paths do continue over spaces when a
// later word goes on with a backslash). A slash command such as "/help" and an
// absolute URL path such as "GET /api/v1" look like paths and are hidden.
type PathRedactor struct {
	roots []string // the run folder, cleaned, slash-separated: as given and its real path
	home  string   // the user's home folder, cleaned; "" when unknown
}

// NewPathRedactor returns the redactor that keeps paths inside runFolder. The
// folder is made absolute, and its real path (links followed) is kept too when
// it differs, since the engine reads the run folder by its real path.
func NewPathRedactor(runFolder string) *PathRedactor {
	p := &PathRedactor{}
	if runFolder != "" {
		abs, err := filepath.Abs(runFolder)
		if err != nil {
			abs = filepath.Clean(runFolder)
		}
		p.roots = append(p.roots, filepath.ToSlash(abs))
		if real, err := filepath.EvalSymlinks(abs); err == nil && filepath.ToSlash(real) != p.roots[0] {
			p.roots = append(p.roots, filepath.ToSlash(real))
		}
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		p.home = filepath.ToSlash(filepath.Clean(home))
	}
	return p
}

// Mask returns the spans of the paths outside the run folder. open is always -1.
func (p *PathRedactor) Mask(text string) ([]Span, int) {
	return stabilise(text, p.find)
}

// pathTrigger marks the bytes at which a path can start: '/' (POSIX), '~' and
// '$' (home), ':' (drive letters, file://), '\\' (UNC).
var pathTrigger = [256]uint8{'/': 1, '~': 1, '$': 1, ':': 1, '\\': 1}

func (p *PathRedactor) find(text string, out []Span) ([]Span, int) {
	for i := 0; ; i++ {
		if i = skipCold(text, i, &pathTrigger); i >= len(text) {
			break
		}
		start, end, ok := p.pathAt(text, i)
		if !ok {
			continue
		}
		out = append(out, Span{Start: start, End: end, Placeholder: PathPlaceholder})
		i = end - 1
	}
	return out, -1
}

// pathAt looks for a path to hide that is recognised at the trigger byte at i
// (it may start before i: a drive letter, "file:"). It returns the path's range.
func (p *PathRedactor) pathAt(text string, i int) (int, int, bool) {
	switch text[i] {
	case '/':
		if !boundaryBefore(text, i) || i+1 >= len(text) || text[i+1] == '/' || closingTag(text, i) {
			return 0, 0, false
		}
		end := posixEnd(text, i)
		if end-i < 2 || p.inside(text[i:end]) {
			return 0, 0, false
		}
		return i, end, true
	case '~':
		if !boundaryBefore(text, i) {
			return 0, 0, false
		}
		j := i + 1
		for j < len(text) && isUserByte(text[j]) {
			j++
		}
		if j >= len(text) || text[j] != '/' {
			return 0, 0, false
		}
		end := posixEnd(text, i)
		if j == i+1 && p.home != "" && p.inside(p.home+text[j:end]) {
			return 0, 0, false
		}
		return i, end, true
	case '$':
		if !boundaryBefore(text, i) {
			return 0, 0, false
		}
		rest := text[i:]
		var n int
		switch {
		case strings.HasPrefix(rest, "$HOME/"):
			n = len("$HOME")
		case strings.HasPrefix(rest, "${HOME}/"):
			n = len("${HOME}")
		default:
			return 0, 0, false
		}
		end := posixEnd(text, i+n)
		if p.home != "" && p.inside(p.home+text[i+n:end]) {
			return 0, 0, false
		}
		return i, end, true
	case ':':
		if i >= 4 && strings.EqualFold(text[i-4:i], "file") && strings.HasPrefix(text[i+1:], "//") &&
			boundaryBefore(text, i-4) {
			start := i - 4
			end := uriEnd(text, i+3)
			if p.insideURI(text[i+3 : end]) {
				return 0, 0, false
			}
			return start, end, true
		}
		if i >= 1 && i+1 < len(text) && isASCIILetter(text[i-1]) && boundaryBefore(text, i-1) &&
			(text[i+1] == '\\' || text[i+1] == '/') && !strings.HasPrefix(text[i+1:], "//") {
			start := i - 1
			end := windowsEnd(text, start)
			if end-start < 4 || p.insideWindows(text[start:end]) {
				return 0, 0, false
			}
			return start, end, true
		}
	case '\\':
		if boundaryBefore(text, i) && i+2 < len(text) && text[i+1] == '\\' && isAlnum(text[i+2]) {
			end := windowsEnd(text, i)
			if p.insideWindows(text[i:end]) {
				return 0, 0, false
			}
			return i, end, true
		}
	}
	return 0, 0, false
}

// closingTag reports whether the "/" at i closes a markup tag: "</code>",
// "</x:Name >", which is not a path.
func closingTag(text string, i int) bool {
	if i == 0 || text[i-1] != '<' || i+1 >= len(text) || !isASCIILetter(text[i+1]) {
		return false
	}
	j := i + 2
	for j < len(text) && (isAlnum(text[j]) || text[j] == ':' || text[j] == '.' || text[j] == '_' || text[j] == '-') {
		j++
	}
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	return j < len(text) && text[j] == '>'
}

// inside reports whether the absolute slash path abs, cleaned, is in the run folder.
func (p *PathRedactor) inside(abs string) bool {
	c := path.Clean(abs)
	for _, r := range p.roots {
		if c == r || r == "/" || strings.HasPrefix(c, r) && c[len(r)] == '/' {
			return true
		}
	}
	return false
}

// insideWindows compares a drive or UNC path with the run folder, ignoring case
// as Windows does. On a POSIX machine the run folder has no drive, so this is false.
func (p *PathRedactor) insideWindows(win string) bool {
	c := path.Clean(strings.ReplaceAll(win, `\`, "/"))
	for _, r := range p.roots {
		if len(r) < 2 || r[0] == '/' && r[1] != '/' {
			continue
		}
		if strings.EqualFold(c, r) || len(c) > len(r) && strings.EqualFold(c[:len(r)], r) && c[len(r)] == '/' {
			return true
		}
	}
	return false
}

// insideURI reports whether the part of a file URI after "file://" names a
// local path in the run folder.
func (p *PathRedactor) insideURI(rest string) bool {
	host, pth := "", rest
	if k := strings.IndexByte(rest, '/'); k > 0 {
		host, pth = rest[:k], rest[k:]
	} else if k < 0 {
		return false
	}
	if host != "" && !strings.EqualFold(host, "localhost") {
		return false
	}
	if u, err := url.PathUnescape(pth); err == nil {
		pth = u
	}
	if len(pth) >= 3 && pth[0] == '/' && isASCIILetter(pth[1]) && pth[2] == ':' {
		return p.insideWindows(pth[1:])
	}
	return p.inside(pth)
}

// boundaryBefore reports whether a path may start at i: at the start of text or
// after white space, a quote, a bracket or an operator, not inside a word, a
// URL or a relative path (a/b, ./x, host/x).
func boundaryBefore(text string, i int) bool {
	if i == 0 {
		return true
	}
	b := text[i-1]
	if b < utf8.RuneSelf {
		return isSpace(b) || strings.IndexByte("\"'`=([{<>,;|:*", b) >= 0
	}
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

// posixEnd returns where a POSIX path that starts at i ends: at white space, a
// quote, a bracket, ':', or other punctuation a path rarely holds, with
// trailing dots (a sentence's full stop) left out.
func posixEnd(text string, i int) int {
	j := runEnd(text, i+1, &posixStop)
	for j > i+1 && text[j-1] == '.' {
		j--
	}
	return j
}

var posixStop = stopSet(" \t\n\r\v\f\"'`<>|;,:?*()[]{}\\")

// windowsEnd returns where a drive or UNC path that starts at i ends. It goes on
// over a space when one of the next three words continues the path with a
// backslash ("C:\Program Files (x86)\Tool\x.exe").
func windowsEnd(text string, i int) int {
	end := windowsWordEnd(text, i)
	for {
		j, grown := end, false
		for words := 0; words < 3 && j < len(text) && text[j] == ' '; words++ {
			k := windowsWordEnd(text, j+1)
			if k == j+1 {
				break
			}
			if strings.IndexByte(text[j+1:k], '\\') >= 0 {
				end, grown = k, true
				break
			}
			j = k
		}
		if !grown {
			break
		}
	}
	for end > i+1 && (text[end-1] == '.' || text[end-1] == ')' && strings.Count(text[i:end], "(") < strings.Count(text[i:end], ")")) {
		end--
	}
	return end
}

func windowsWordEnd(text string, j int) int { return runEnd(text, j, &windowsStop) }

// runEnd returns where the run of characters from j ends: at a byte of stop
// or at white space.
func runEnd(text string, j int, stop *[128]bool) int {
	for j < len(text) {
		b := text[j]
		if b < utf8.RuneSelf {
			if stop[b] {
				break
			}
			j++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[j:])
		if unicode.IsSpace(r) {
			break
		}
		j += n
	}
	return j
}

var windowsStop = stopSet(" \t\n\r\v\f\"'`<>|;,?*")

// uriEnd returns where a URI whose body starts at j ends.
func uriEnd(text string, j int) int {
	j = runEnd(text, j, &uriStop)
	for j > 0 && (text[j-1] == '.' || text[j-1] == ',') {
		j--
	}
	return j
}

var uriStop = stopSet(" \t\n\r\v\f\"'`<>|)]}")

func stopSet(chars string) (s [128]bool) {
	for i := 0; i < 0x20; i++ {
		s[i] = true
	}
	s[0x7f] = true
	for i := 0; i < len(chars); i++ {
		s[chars[i]] = true
	}
	return s
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

func isASCIILetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

func isAlnum(b byte) bool { return isASCIILetter(b) || b >= '0' && b <= '9' }

func isUserByte(b byte) bool { return isAlnum(b) || b == '.' || b == '_' || b == '-' }
