package masking

import "strings"

// values.go decides where a value given to a credential name ends, by the
// context it is written in, and reads the shapes of a name and a value the
// assignment rule's operators do not cover.
//
// An unquoted value ends at white space on a command line
// (`--password hunter2 -u root`: the flag's value is one word) and after
// `=` in a line of fields (`token=abc123 done`), since what follows it
// there is more of the command or another field. In a line of a YAML, env
// or INI file the value is the rest of the line (`password: correct horse
// battery staple`, `DB_PASSWORD=two words`), less a trailing comment:
// there the line is the value, and a passphrase has spaces. A line of such
// a file is one whose key starts it, after indentation and an `export ` or
// a YAML list's `- `. In prose, after a name and a colon (`alice was told:
// password: correct horse battery staple`), the value runs on over plain
// words to the end of its clause (proseValueEnd): a passphrase of several
// words is never shown in part, and a one-word value followed by more of
// the sentence (`password: hunter2 is the one`) is still one word.

// lineValueEnd is the secret-assignment rule's extend: an unquoted value
// (group 5) given with ":" or "=" to a key that starts its line runs to
// the end of the line, less a trailing comment (" #…", " ;…") and blanks.
// It stops at a double quote or a backquote too: in the readable view of a
// JSON string (views.go) the string's closing quote ends the line's text.
func lineValueEnd(text string, start int, mt []int, to int) int {
	if len(mt) < 12 || mt[10] < 0 || mt[2] < 0 {
		return to
	}
	keyStart, keyEnd, valStart := start+mt[2], start+mt[3], start+mt[10]
	op := strings.Trim(text[keyEnd:valStart], " \t\"'\\@")
	if op != ":" && op != "=" {
		return to // a comparison (==, !=) or a declaration (:=) is code: one word
	}
	if !startsLine(text, keyStart) {
		if op == ":" {
			return proseValueEnd(text, to)
		}
		return to
	}
	e := to
	for e < len(text) && text[e] != '\n' && text[e] != '\r' && text[e] != '"' && text[e] != '`' {
		if (text[e] == '#' || text[e] == ';') && (text[e-1] == ' ' || text[e-1] == '\t') {
			break // a trailing comment
		}
		e++
	}
	for e > to && (text[e-1] == ' ' || text[e-1] == '\t') {
		e--
	}
	return e
}

// proseValueMaxWords bounds how many words after its first a value in
// prose takes: a passphrase is four to seven words.
const proseValueMaxWords = 7

// proseValueEnd is where a value given with a colon in prose ends, its
// first word ending at to: it takes each next word after a single blank
// while that word is plain (letters, digits, - _ ' only) and no word that
// carries a sentence on (a verb, a preposition, an article, what a log
// says of a credential: clauseWord). Punctuation after a word (, ; . ! ?)
// ends the clause, as do two blanks or a tab (a log's column), a line's
// end, a quote and a field's name (`user:`) or a path.
func proseValueEnd(text string, to int) int {
	if to == 0 || strings.IndexByte(".,;!?", text[to-1]) >= 0 {
		return to // the first word ended its sentence or clause
	}
	e := to
	for words := 0; words < proseValueMaxWords; words++ {
		if e+1 >= len(text) || text[e] != ' ' {
			return e
		}
		p := e + 1
		q := p
		for q < len(text) && text[q] != ' ' && text[q] != '\t' && text[q] != '\n' && text[q] != '\r' {
			q++
		}
		w := text[p:q]
		end := strings.TrimRight(w, ".,;!?")
		if end == "" || !plainWord(end) || clauseWord(end) {
			return e
		}
		e = p + len(end)
		if len(end) < len(w) {
			return e // punctuation ends the clause
		}
	}
	return e
}

// plainWord reports a word a passphrase is made of: letters, digits and
// the joiners - _ '. A word with a colon, an equals sign, a slash, a quote
// or a bracket is another field, a path or markup, not the value.
func plainWord(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '\'' || c >= 0x80) {
			return false
		}
	}
	return true
}

// clauseWord reports a word that carries a sentence on after a value of
// one word (`password: hunter2 is the one`, `token: abc123 expired at
// noon`): a verb, a preposition, an article, a conjunction that starts a
// clause, or a word isProseWord reads as what a log says of a credential.
// "and", "or", "with" and "of" are not among them: they join the words of
// a passphrase as often as they go on with a sentence.
func clauseWord(w string) bool {
	lw := strings.ToLower(w)
	switch lw {
	case "and", "or", "with", "of":
		return false
	case "be", "been", "has", "have", "had", "will", "would", "should", "can", "could", "must", "may",
		"do", "does", "did", "at", "by", "as", "but", "so", "then", "when", "where", "which", "who",
		"because", "after", "before", "while", "if", "into", "via", "using", "until", "since", "than",
		"he", "she", "they", "we", "i", "you", "there", "here", "now", "again", "also", "just":
		return true
	}
	return isProseWord(lw)
}

// startsLine reports whether the key at k starts its line: only blanks
// before it, an `export ` or a YAML list item's `- `, and an opening quote.
func startsLine(text string, k int) bool {
	lineStart := strings.LastIndexAny(text[:k], "\n\r") + 1
	p := strings.TrimLeft(text[lineStart:k], " \t")
	p = strings.TrimSuffix(strings.TrimSuffix(p, `"`), "'")
	p = strings.TrimPrefix(p, "- ")
	p = strings.TrimPrefix(p, "export ")
	return strings.TrimLeft(p, " \t") == ""
}

// quotedStatement hides the literal of a statement that gives a credential
// name a quoted value without an operator, ended by a semicolon:
// password "…"; secret '…'; (at is the closing quote). A blank must stand
// between the name and the quote, and the name must not be quoted itself.
func quotedStatement(text string, at int) (Span, bool) {
	q := text[at]
	lineStart := strings.LastIndexByte(text[:at], '\n') + 1
	open := strings.LastIndexByte(text[lineStart:at], q)
	if open < 0 {
		return Span{}, false
	}
	open += lineStart
	k := open
	for k > lineStart && (text[k-1] == ' ' || text[k-1] == '\t') {
		k--
	}
	if k == open {
		return Span{}, false // no blank: "a""b"; or an escaped quote (the view reads it)
	}
	keyFrom := wordStart(text, k)
	if keyFrom == k {
		return Span{}, false
	}
	if keyFrom > lineStart && strings.IndexByte("\"'`\\", text[keyFrom-1]) >= 0 {
		return Span{}, false // the name is quoted: a string, not a statement's name
	}
	key, value := text[keyFrom:k], text[open+1:at]
	class := secretKeyClass(key)
	if class == keyNone || isGetter(key) || !assignedLiteral(key, value, true, class) {
		return Span{}, false
	}
	return Span{Start: open + 1, End: at, Placeholder: SecretPlaceholder}, true
}

// gluedEnd returns where a token that ends at to ends with what is glued to
// it: the bytes up to a blank, a quote, a bracket or a separator
// (tokenStop), or a JSON escape (\n, \", which end a string's line), less
// the punctuation that ends a sentence.
func gluedEnd(text string, to int) int {
	from := to
	for to < len(text) && !tokenStop[text[to]] {
		if text[to] == '\\' && to+1 < len(text) && strings.IndexByte(`"\/bfnrtu`, text[to+1]) >= 0 {
			break
		}
		to++
	}
	for to > from && strings.IndexByte(".:!?", text[to-1]) >= 0 {
		to-- // a sentence's punctuation after the token
	}
	return to
}
