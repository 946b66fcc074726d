package masking

import "strings"

// literals.go decides whether the value assigned to a credential name is a
// literal (hidden, whatever it looks like: spec §8) or plainly not one: code
// on the right of the name, a type, a label, a word of prose.
//
// An entropy bar must never veto a value a credential name announces:
// agents write `token=zqxtokenvalue789` in tests, demos and configs, and a
// test password is as much a secret to a reader as a generated one. What
// stays is what a reader sees at once is not a value: a call
// (getPassword()), a member or variable (this.token, userToken,
// access_token), a type (token: string), a label or selector that spells
// the credential's own word ("Password:", "#add-password"), or a word of
// prose after a colon (Token: expired).

// assignedLiteral reports whether value, assigned to key (a name of class
// class, see secretKeyClass), is a literal to hide. quoted: the value was
// written between quotes.
//
// An unquoted value may be of several words (the rest of a YAML, env or
// INI line: values.go): its first word is read as a value of one word is
// (code, a credential's name, a word of prose), but a status word
// (Token: expired) is one only when it stands alone.
func assignedLiteral(key, value string, quoted bool, class keyClass) bool {
	first := value
	if i := strings.IndexAny(value, " \t"); !quoted && i >= 0 {
		first = value[:i]
	}
	// A word of several (a passphrase) may be "sample" or "fake" and the
	// value no placeholder: the first word says.
	if len(value) < minSecretLen || isPlaceholderValue(first) || isTypeName(first) {
		return false
	}
	if class == keyPwd && (value[0] == '/' || value[0] == '~') {
		return false // PWD=/home/x is the working folder (the path rule sees to it)
	}
	if quoted {
		return !isLabel(value)
	}
	return !isCode(first) && !namesCredential(first) && !isProseWord(first)
}

// namesCredential reports an unquoted value of two words or more, without a
// digit, that names a credential itself: the key a secret store holds it
// under (secretKey: api-key, key: db-password-prod), not the secret.
func namesCredential(v string) bool {
	if hasDigit(v) || strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_' || r == '.')
	}) >= 0 {
		return false
	}
	var buf [8]string
	return len(keyWords(v, buf[:0])) >= 2 && secretKeyClass(v) != keyNone
}

// isCode reports an unquoted value that is an expression rather than a
// literal: a call or an index (getPassword(), os.environ[), a member
// (this.password, config.secret), a variable named in words (userToken,
// access_token, token), or one that starts an expression (!x, -x is a flag).
func isCode(v string) bool {
	i := 0
	for i < len(v) && (isWordByte(v[i]) || v[i] == '.' || v[i] == '$') {
		i++
	}
	if i > 0 && i < len(v) && (v[i] == '(' || v[i] == '[') && (isASCIILetter(v[0]) || v[0] == '_' || v[0] == '$') {
		return true // a call or an index: getPassword(), secrets.token_hex(16), os.environ["X"]
	}
	if i != len(v) || hasDigit(v) || !isASCIILetter(v[0]) && v[0] != '_' && v[0] != '$' {
		return false
	}
	if exprKeyword(v) {
		return true // token = await getToken(), secret = new Secret(…)
	}
	// An identifier without a digit: code when it is spelled as code (a
	// member, snake_case, camelCase of whole words) or names a credential
	// itself (password = passwd, secret: SecretStr).
	if strings.IndexByte(v, '.') > 0 || strings.IndexByte(v, '_') >= 0 || v[0] == '$' {
		return true
	}
	if secretKeyClass(v) != keyNone {
		return true
	}
	return isCamelWords(v)
}

// exprKeyword reports a word of the languages agents write that starts an
// expression, never a value: what follows `=` is code.
func exprKeyword(v string) bool {
	switch v {
	case "await", "new", "yield", "typeof", "async", "function", "lambda", "require", "import", "fn", "func",
		"self", "this", "super", "not", "match", "if", "try", "do", "go", "make", "sizeof", "static", "const", "let", "var":
		return true
	}
	return false
}

// isCamelWords reports an identifier of two or more camel-case words, each
// at least three letters but the first (userToken, getAuthHeader): a random
// string of mixed case has many short runs (AbCdEfGh), a name a few long ones.
func isCamelWords(v string) bool {
	var buf [8]string
	words := keyWords(v, buf[:0])
	if len(words) < 2 {
		return false
	}
	for i, w := range words {
		if i > 0 && len(w) < 3 {
			return false
		}
	}
	return true
}

// isLabel reports a quoted value that names the credential rather than
// holds it: it spells a credential word as a word of its own and reads as
// text or a selector ("Password:", "Enter your password", "#add-password",
// ".token-field").
func isLabel(v string) bool {
	if !strings.ContainsAny(v, " :#.") {
		return false
	}
	var buf [8]string
	for _, w := range keyWords(v, buf[:0]) {
		if _, ok := secretKeyWords[w]; ok || w == "pass" || w == "key" {
			return true
		}
	}
	return false
}

// isProseWord reports the words that follow a colon in prose
// ("Password: the one in the vault") and what a log says of a credential
// (Token: expired, secret: rotated), never a value. Any other word is a
// value the name is given (secret: banana): spec §8 hides it whatever it
// looks like.
func isProseWord(v string) bool {
	switch strings.ToLower(strings.TrimRight(v, ".,;:!")) {
	case "the", "a", "an", "is", "are", "was", "were", "not", "no", "and", "or", "for", "from", "of",
		"in", "on", "to", "with", "this", "that", "it", "its", "see", "use", "set", "unset", "missing",
		"invalid", "expired", "provided", "given", "found", "error", "failed", "ok", "yes",
		// What a log says of a credential.
		"valid", "required", "refreshed", "revoked", "rotated", "present", "absent", "unknown", "pending",
		"ready", "active", "inactive", "disabled", "enabled", "accepted", "rejected", "denied", "granted",
		"updated", "created", "deleted", "removed", "added", "saved", "loaded", "reset", "changed",
		"generated", "issued", "used", "unused", "stored", "cached", "expiring", "expires", "renewed",
		"ignored", "skipped", "checked", "verified", "needed", "done", "none", "empty", "sent", "received":
		return true
	}
	return false
}

// isTypeName reports a type written where a value would be (token: string,
// password: str, "api_key": "string" in a schema's example).
func isTypeName(v string) bool {
	switch v {
	case "string", "String", "str", "int", "integer", "bool", "boolean", "number", "any", "bytes",
		"object", "Optional", "SecretStr", "text", "varchar", "char":
		return true
	}
	return strings.HasPrefix(v, "Optional[") || strings.HasPrefix(v, "Option<")
}
