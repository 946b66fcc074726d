// generated_test.go holds the second corpus of issue 28: secrets and
// look-alikes generated here from the shapes the issue names (a credential
// name in each style, a vendor-style prefix and a random tail, a URL's
// secret parts, base64 of a key block), with vendors, names and values drawn
// at random: none is copied from a scanner's tests, and the rules were not
// tuned on them. It goes through the same agent contexts and index as the
// scanners' samples, and is held to the same bar.
package masking_test

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"runls/masking"
)

// generatedFamilies is the report's order of the generated corpus.
var generatedFamilies = []string{
	"named: env var", "named: JSON/YAML key", "named: CLI flag", "named: header", "named: query parameter",
	"prefixed token in prose", "URL userinfo", "signed URL", "webhook URL", "base64 PEM key", "base64 of a token",
	"look-alike: hash/SHA/UUID/version", "look-alike: id", "look-alike: base64 of prose",
	"look-alike: placeholder", "look-alike: code", "look-alike: prose",
	// The shapes of issue 28's leftovers, drawn from a second stream so
	// that the families above are the same draws as before.
	"named: value of several words", "named: statement", "base64 of a config", "dotted token",
	"look-alike: words after a name", "look-alike: base64 of a config", "look-alike: dotted name",
}

// TestGeneratedSecrets is TestSecretSamples on the generated corpus.
func TestGeneratedSecrets(t *testing.T) {
	if masking.RaceEnabled {
		t.Skip("long under the race detector: make test-go runs it without")
	}
	// RUNLS_GENERATED_SEED draws another corpus of the same shapes: one the
	// rules have never met, to check that they were not fitted to this one.
	seed := uint64(28)
	if s := os.Getenv("RUNLS_GENERATED_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RUNLS_GENERATED_SEED: %v", err)
		}
		seed = n
	}
	samples := generateCorpus(rand.New(rand.NewPCG(seed, 2026)), 40)
	family := map[string]string{}
	for _, s := range samples {
		family[s.ID] = s.Rule
	}
	outcomes := runSamples(t, samples, func(s secretSample) string { return family[s.ID] })
	markSpecNamed(outcomes)
	report(t, outcomes, generatedFamilies)
	checkExceptions(t, outcomes, nil) // every generated secret is hidden
}

// corpusGen draws the parts of the generated corpus.
type corpusGen struct {
	r   *rand.Rand
	out []secretSample
}

const (
	lowerDigits = "abcdefghijklmnopqrstuvwxyz0123456789"
	base62      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	hexDigits   = "0123456789abcdef"
)

func (g *corpusGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *corpusGen) random(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// word makes a pronounceable made-up word: a vendor's or a project's name.
func (g *corpusGen) word() string {
	const cons, vow = "bcdfghklmnprstvz", "aeiou"
	n := 2 + g.r.IntN(2)
	var b strings.Builder
	for range n {
		b.WriteByte(cons[g.r.IntN(len(cons))])
		b.WriteByte(vow[g.r.IntN(len(vow))])
	}
	return b.String()
}

// value draws a value a credential name may be given: generated or written
// by hand for a test, a demo or a config.
func (g *corpusGen) value() string {
	switch g.r.IntN(6) {
	case 0:
		return g.random(base62, 16+g.r.IntN(33))
	case 1:
		return g.random(lowerDigits, 12+g.r.IntN(30))
	case 2:
		return "zq" + g.word() + g.word() + fmt.Sprint(100+g.r.IntN(900)) // low entropy, as agents write in tests
	case 3:
		return g.random(hexDigits, 32)
	case 4:
		return strings.ToUpper(g.word()[:1]) + g.word() + fmt.Sprint(g.r.IntN(10000)) + g.pick("!", "#", "$", "")
	default:
		return g.word() + "-" + g.random(base62, 20+g.r.IntN(20))
	}
}

// credWords are the credential words of names (spec §8), as words.
var credWords = [][]string{
	{"api", "key"}, {"secret"}, {"token"}, {"access", "token"}, {"client", "secret"}, {"password"},
	{"secret", "key"}, {"private", "key"}, {"auth", "token"}, {"apikey"}, {"access", "key"}, {"passwd"},
}

func (g *corpusGen) nameWords() []string {
	w := credWords[g.r.IntN(len(credWords))]
	if g.r.IntN(3) > 0 {
		return append([]string{g.word()}, w...)
	}
	return w
}

func joinCase(words []string, style string) string {
	switch style {
	case "UPPER_SNAKE":
		return strings.ToUpper(strings.Join(words, "_"))
	case "kebab":
		return strings.Join(words, "-")
	case "camel":
		var b strings.Builder
		for i, w := range words {
			if i > 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
		}
		return b.String()
	case "Title-Kebab":
		out := make([]string, len(words))
		for i, w := range words {
			out[i] = strings.ToUpper(w[:1]) + w[1:]
		}
		return strings.Join(out, "-")
	}
	return strings.Join(words, "_")
}

func (g *corpusGen) add(family, kind, text, secret string) {
	g.out = append(g.out, secretSample{ID: fmt.Sprintf("gen-%d", len(g.out)), Rule: family, Kind: kind, Text: text, Secret: secret})
}

// generateCorpus draws n samples of each family.
func generateCorpus(r *rand.Rand, n int) []secretSample {
	g := &corpusGen{r: r}
	for range n {
		v := g.value()
		g.add("named: env var", "tp", g.pick("export ", "", "  ")+joinCase(g.nameWords(), "UPPER_SNAKE")+"="+v, v)
		v = g.value()
		switch g.r.IntN(3) {
		case 0:
			g.add("named: JSON/YAML key", "tp", `{"`+joinCase(g.nameWords(), "camel")+`": "`+v+`", "region": "eu-west-1"}`, v)
		case 1:
			g.add("named: JSON/YAML key", "tp", "config:\n  "+joinCase(g.nameWords(), "snake")+": "+v+"\n  region: eu-west-1", v)
		default:
			g.add("named: JSON/YAML key", "tp", joinCase(g.nameWords(), "snake")+": '"+v+"'", v)
		}
		v = g.value()
		flag := append([]string{g.word()}, g.pick("token", "secret", "password", "api-key", "access-key")) // a flag names its kind last
		g.add("named: CLI flag", "tp", g.word()+"ctl login --"+joinCase(flag, "kebab")+g.pick(" ", "=")+v+" --verbose", v)
		v = g.value()
		g.add("named: header", "tp", `curl -H "X-`+joinCase(append([]string{g.word()}, g.pick("Token", "Api-Key", "Secret", "Auth-Token")), "Title-Kebab")+": "+v+`" https://api.`+g.word()+".io/v1/items", v)
		v = g.value()
		g.add("named: query parameter", "tp", "GET https://api."+g.word()+".com/v2/"+g.word()+"?"+joinCase(g.nameWords(), "snake")+"="+v+"&page=2", v)

		tok := g.word()[:2+g.r.IntN(3)] + g.pick("_", "-")
		if g.r.IntN(2) == 0 {
			tok += g.pick("pat", "live", "proj", "svc", "prod", "key") + tok[len(tok)-1:]
		}
		tok += g.random(g.pick(base62, lowerDigits, base62+"_-"), 32+g.r.IntN(40))
		g.add("prefixed token in prose", "tp", g.pick("I set the key to ", "Using ", "the deploy used ", "ok: ")+tok+g.pick(" and it worked", "", " for the upload."), tok)

		pass := g.value()
		if g.r.IntN(2) == 0 {
			g.add("URL userinfo", "tp", "DATABASE_URL_HOST="+g.pick("postgres", "mysql", "redis", "amqp")+"://"+g.word()+":"+pass+"@db."+g.word()+".internal:5432/app", pass)
		} else {
			user := g.random(base62, 24+g.r.IntN(16))
			g.add("URL userinfo", "tp", "git clone https://"+user+"@git."+g.word()+".com/o/r.git", user)
		}

		if g.r.IntN(2) == 0 {
			sig := g.random(base62+"+/", 43)
			g.add("signed URL", "tp", "download https://"+g.word()+".blob.core.windows.net/c/f.tar?sv=2022-11-02&se=2026-10-22T00%3A00%3A00Z&sr=b&sp=r&sig="+strings.ReplaceAll(strings.ReplaceAll(sig, "+", "%2B"), "/", "%2F")+"%3D done", sig)
		} else {
			sig := g.random(hexDigits, 64)
			g.add("signed URL", "tp", "https://"+g.word()+".s3.amazonaws.com/k.zip?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261021T180000Z&X-Amz-Expires=900&X-Amz-Signature="+sig, sig)
		}

		switch g.r.IntN(3) {
		case 0:
			p := "T" + g.random(base62[:26]+"0123456789", 8) + "/B" + g.random(base62[:26]+"0123456789", 10) + "/" + g.random(base62, 24)
			g.add("webhook URL", "tp", "posting to https://hooks."+g.word()+".com/services/"+p, p)
		case 1:
			p := fmt.Sprint(100000000000000000+g.r.Int64N(800000000000000000)) + "/" + g.random(base62+"_-", 68)
			g.add("webhook URL", "tp", "WEBHOOK=https://"+g.word()+".com/api/webhooks/"+p, p)
		default:
			p := g.random(lowerDigits, 26)
			g.add("webhook URL", "tp", "curl -X POST https://chat."+g.word()+".org/hooks/"+p+" -d @msg.json", p)
		}

		der := make([]byte, 600)
		for i := range der {
			der[i] = byte(g.r.IntN(256))
		}
		pem := "-----BEGIN " + g.pick("RSA ", "EC ", "OPENSSH ", "") + "PRIVATE KEY-----\n" + base64.StdEncoding.EncodeToString(der) + "\n-----END PRIVATE KEY-----\n"
		b := base64.StdEncoding.EncodeToString([]byte(pem))
		g.add("base64 PEM key", "tp", g.pick("tls.key: ", "SSH_KEY_B64=", "the key is ", "")+b, b)

		var vt string
		switch g.r.IntN(3) {
		case 0:
			vt = "ghp_" + g.random(base62, 36)
		case 1:
			vt = "glpat-" + g.random(base62, 20)
		default:
			vt = "xoxb-" + fmt.Sprint(1000000000+g.r.IntN(9000000000)) + "-" + fmt.Sprint(1000000000+g.r.IntN(9000000000)) + "-" + g.random(base62, 24)
		}
		b64 := base64.StdEncoding.EncodeToString([]byte(vt))
		g.add("base64 of a token", "tp", g.pick("GH_TOKEN_B64=", "data:\n  token: ", "the secret holds ")+b64, b64)

		// Look-alikes: what an agent writes that is no secret.
		sha := make([]byte, 20)
		for i := range sha {
			sha[i] = byte(g.r.IntN(256))
		}
		g.add("look-alike: hash/SHA/UUID/version", "fp", g.pick(
			"commit "+hex.EncodeToString(sha)+" "+g.word(),
			"digest sha256:"+g.random(hexDigits, 64),
			"request id "+g.random(hexDigits, 8)+"-"+g.random(hexDigits, 4)+"-4"+g.random(hexDigits, 3)+"-a"+g.random(hexDigits, 3)+"-"+g.random(hexDigits, 12),
			fmt.Sprintf("upgraded %s to v%d.%d.%d-rc%d", g.word(), g.r.IntN(9), g.r.IntN(30), g.r.IntN(20), g.r.IntN(5)),
			`"integrity": "sha512-`+base64.StdEncoding.EncodeToString([]byte(g.random(base62, 64)))+`"`,
		), "")
		g.add("look-alike: id", "fp", g.pick(
			"tool call_"+g.random(base62, 24)+" returned 0",
			"message msg_01"+g.random(base62, 24)+" from "+g.word(),
			"toolu_01"+g.random(base62, 22)+" finished",
			"completion chatcmpl-"+g.random(base62, 29),
			"GET https://api."+g.word()+".com/v1/files/file-"+g.random(base62, 24)+"/content",
			"the run "+g.word()+"_"+fmt.Sprint(20260000+g.r.IntN(10000))+"_final_"+g.word(),
		), "")
		prose := strings.Join([]string{g.word(), "said", "the", "build", "of", g.word(), "passed", "after", "the", "second", "retry", "on", "the", "runner"}, " ")
		g.add("look-alike: base64 of prose", "fp", "payload "+base64.StdEncoding.EncodeToString([]byte(prose)), "")
		name := joinCase(g.nameWords(), "UPPER_SNAKE")
		g.add("look-alike: placeholder", "fp", g.pick(
			name+"=<your-"+g.word()+"-key>",
			joinCase(g.nameWords(), "snake")+": ${"+name+"}",
			name+"=$"+name,
			joinCase(g.nameWords(), "snake")+": changeme",
			joinCase(g.nameWords(), "camel")+` = "***"`,
			name+"=",
		), "")
		g.add("look-alike: code", "fp", g.pick(
			"password = getPassword()",
			`passwordLabel: "Password:"`,
			`this.addPassword = "#add-password"`,
			"const token = await getToken("+g.word()+");",
			"secret := os.Getenv(\""+name+"\")",
			joinCase(g.nameWords(), "snake")+": str",
			"self."+joinCase(g.nameWords(), "snake")+" = "+joinCase(g.nameWords(), "snake"),
		), "")
		g.add("look-alike: prose", "fp", g.pick(
			"the token budget is 4096 tokens for "+g.word(),
			"rotate the secret every 90 days, said "+g.word(),
			"Token: expired, asking "+g.word()+" for a new one",
			"the password field of the "+g.word()+" form is required",
			"TestHandler2_ReturnsTokenFor"+strings.ToUpper(g.word()[:1])+g.word()+" passed",
		), "")
	}
	g.r = rand.New(rand.NewPCG(r.Uint64(), 2027))
	for range n {
		g.leftoverShapes()
	}
	return g.out
}

// leftoverShapes draws one sample of each family of issue 28's leftovers:
// a value of several words in a YAML or env line, a name given a quoted
// value without an operator, base64 of a config that holds a token
// anywhere, a three-part dotted token; and their look-alikes.
func (g *corpusGen) leftoverShapes() {
	phrase := g.word() + g.pick(" ", "-") + g.word() + " " + g.word() + " " + g.word() + fmt.Sprint(g.r.IntN(100))
	switch g.r.IntN(3) {
	case 0:
		g.add("named: value of several words", "tp", "config:\n  "+joinCase(g.nameWords(), "snake")+": "+phrase+"\n  region: eu-west-1", phrase)
	case 1:
		g.add("named: value of several words", "tp", "LANG=C\n"+joinCase(g.nameWords(), "UPPER_SNAKE")+"="+phrase+g.pick("", "  # rotated")+"\nTERM=xterm", phrase)
	default:
		g.add("named: value of several words", "tp", "[db]\nhost = db."+g.word()+".internal\n"+joinCase(g.nameWords(), "snake")+" = "+phrase, phrase)
	}
	v := g.value()
	g.add("named: statement", "tp", g.pick("server {\n  ", "", "set ")+joinCase(g.nameWords(), "snake")+" "+g.pick(`"`+v+`";`, `'`+v+`';`)+g.pick("\n}", ""), v)

	var tok string
	switch g.r.IntN(4) {
	case 0:
		tok = "ghp_" + g.random(base62, 36)
	case 1:
		tok = "glpat-" + g.random(base62, 20)
	case 2:
		tok = "sk_live_" + g.random(base62, 32)
	default:
		tok = "AKIA" + g.random(base62[:26]+"234567", 16)
	}
	var config string
	switch g.r.IntN(3) {
	case 0:
		config = "export REGION=eu-west-1\nexport " + strings.ToUpper(g.word()) + "_TOKEN=" + tok + "\nexport DEBUG=1\n"
	case 1:
		config = `{"auths":{"registry.` + g.word() + `.io":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("ci:"+tok)) + `"}}}`
	default:
		config = "# " + g.word() + " settings\nurl: https://" + g.word() + ".io\ncredentials: " + tok + "\n"
	}
	b := base64.StdEncoding.EncodeToString([]byte(config))
	g.add("base64 of a config", "tp", g.pick("CONFIG_B64=", "data:\n  config.json: ", "the agent wrote ")+b, b)

	head := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprint(100000000000000000 + g.r.Int64N(800000000000000000))))
	dotted := head + "." + g.random(base62+"-_", 6) + "." + g.random(base62+"-_", 27+g.r.IntN(12))
	g.add("dotted token", "tp", g.pick("bot token ", "DISCORD_BOT=", "using ")+dotted+g.pick("", " now"), dotted)

	g.add("look-alike: words after a name", "fp", g.pick(
		"password: the one in the "+g.word()+" vault",
		"secret: see the runbook of "+g.word(),
		"token: expired yesterday, asking "+g.word(),
		"  api_key: missing from the "+g.word()+" config",
	), "")
	g.add("look-alike: base64 of a config", "fp", "CONFIG_B64="+base64.StdEncoding.EncodeToString([]byte(
		"export REGION=eu-west-1\nexport LOG_LEVEL="+g.pick("debug", "info")+"\nexport "+strings.ToUpper(g.word())+"_URL=https://"+g.word()+".io\n")), "")
	g.add("look-alike: dotted name", "fp", g.pick(
		"at org."+g.word()+"."+strings.ToUpper(g.word()[:1])+g.word()+"Handler.handle(Handler.java:"+fmt.Sprint(g.r.IntN(400))+")",
		"loaded assets/app."+g.random(hexDigits, 8)+".min.js and vendor."+g.random(hexDigits, 20)+".js",
		"model "+g.word()+"-v2.20261021.checkpoint-"+fmt.Sprint(g.r.IntN(9999)),
	), "")
}
