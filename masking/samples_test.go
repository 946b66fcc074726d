// samples_test.go holds the test of masking against the secret samples of
// other projects' scanners (gitleaks' rule tests, detect-secrets' plugin
// tables), written into a run in the contexts agents write them in, and
// searched through the real index with the masker on. It is an external test
// (package masking_test) because it goes through the retriever, which imports
// masking.
package masking_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/zricethezav/gitleaks/v8/detect"

	"runls/masking"
	"runls/retriever"
)

// The bar of issues 15 and 28 ("What must hold"), on the scanners' samples and on
// the generated corpus alike.
const (
	minHidden     = 0.995 // of the true positives
	maxOverMasked = 0.05  // of the false positives that hold no other rule's secret and give no literal to a credential name
)

// families groups the samples' rules for the report: the kinds of credential
// the spec names (§8), then the rest by the shape of the rule. One place: the
// report, the bar and the failure messages all use it.
func familyOf(r sampleRule) string {
	id := r.ID
	has := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(id, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("private-key", "ds:private_key"):
		return "PEM private keys"
	case id == "jwt-base64":
		return "base64 JWTs"
	case has("jwt", "ds:jwt"):
		return "JWTs"
	case has("github-", "gitlab-", "bitbucket-", "ds:github_token", "ds:gitlab_token"):
		return "source-host tokens"
	case has("slack-", "discord-", "telegram-", "microsoft-teams-", "mattermost-", "gitter-",
		"ds:slack", "ds:discord", "ds:telegram_token"):
		return "chat tokens"
	case has("aws-", "alibaba-", "azure-", "gcp-", "digitalocean-", "yandex-", "cloudflare-", "heroku-",
		"ds:aws_key", "ds:azure_storage_key", "ds:ibm_", "ds:softlayer", "ds:cloudant"):
		return "cloud keys"
	case has("curl-auth-", "ds:basic_auth", "sidekiq-sensitive-url"):
		return "Bearer/Basic and URL passwords"
	case has("generic-api-key", "ds:keyword", "kubernetes-secret-yaml", "hashicorp-tf-password", "nuget-config-password"):
		return "password=/secret= assignments"
	case strings.Contains(r.Regex, `(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`):
		// gitleaks' semi-generic rules: a value assigned to a name that says the vendor.
		return "named API keys"
	default:
		return "bare vendor tokens"
	}
}

// familyOrder is the order of the report's rows.
var familyOrder = []string{
	"PEM private keys", "source-host tokens", "JWTs", "chat tokens", "cloud keys",
	"Bearer/Basic and URL passwords", "named API keys", "password=/secret= assignments",
	"base64 JWTs", "bare vendor tokens",
}

type sampleRule struct {
	ID     string `json:"id"`
	Regex  string `json:"regex"`
	Source string `json:"source"`
}

type secretSample struct {
	ID     string `json:"id"`
	Rule   string `json:"rule"`
	Kind   string `json:"kind"` // "tp" or "fp"
	Text   string `json:"text"`
	Secret string `json:"secret"`
}

type samplesDoc struct {
	Sources []struct {
		Name, Repository, Commit, License string
	} `json:"sources"`
	Rules   []sampleRule   `json:"rules"`
	Samples []secretSample `json:"samples"`
}

// loadSamples reads the samples, or skips the test saying why.
func loadSamples(t *testing.T) samplesDoc {
	t.Helper()
	path := masking.SamplesPath(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("the secret samples cannot be read: %v", err)
	}
	var doc samplesDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(doc.Samples) == 0 || len(doc.Rules) == 0 {
		t.Fatalf("%s holds no samples or no rules", path)
	}
	for _, s := range doc.Sources {
		t.Logf("samples from %s (%s at %.12s, %s)", s.Name, s.Repository, s.Commit, s.License)
	}
	return doc
}

// An agent context: a file of the agent's folder and how a sample's text is
// written into it, beside the context's marker word (an ordinary word that
// must stay findable). lines are the text's lines.
//
// The first six are the contexts issue 28 measures in: a .history message
// (told), a .log record with a level, an indented JSON body, an env dump in
// a note, the record a model said, a plain note. The last two are how agents
// also write: a tool call's JSON on one line (escaped), a record's
// indented continuation lines.
type agentContext struct {
	file, marker string
	write        func(lines []string, marker string) string
}

// continued writes lines[1:] as a record's continuation lines (two-space indent).
func continued(lines []string) string {
	var b strings.Builder
	for _, l := range lines[1:] {
		b.WriteString("\n  ")
		b.WriteString(l)
	}
	return b.String()
}

// wrapped puts marker before the first line and after the last.
func wrapped(lines []string, marker string) []string {
	out := slices.Clone(lines)
	out[0] = marker + " " + out[0]
	out[len(out)-1] += " " + marker
	return out
}

var agentContexts = []agentContext{
	{"told.history", "pelican", func(lines []string, m string) string {
		l := wrapped(lines, m)
		return "2026-10-21 18:00:01 [running] [conv-1] alice was told: " + l[0] + continued(l) + "\n"
	}},
	{"tool.log", "walnut", func(lines []string, m string) string {
		l := wrapped(lines, m)
		return "2026-10-21 18:00:02,345 INFO  [running] [conv-1] alice tool output: " + l[0] + continued(l) + "\n"
	}},
	{"body.log", "juniper", func(lines []string, m string) string {
		body := map[string]any{"tool": "write_file", "args": map[string]any{"path": "notes.txt",
			"content": m + " " + strings.Join(lines, "\n") + " " + m}}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("  ", "  ")
		if err := enc.Encode(body); err != nil {
			panic(err) // a map of strings always encodes
		}
		return "2026-10-21 18:00:05.678 INFO  [running] [conv-1] alice tool call body:\n  " + strings.TrimSuffix(b.String(), "\n") + "\n"
	}},
	{"env-dump.md", "lantern", func(lines []string, m string) string {
		l := slices.Clone(lines)
		l[0] = strings.ToUpper(m) + "=" + l[0]
		return "Output of env on the build box:\n\nHOSTNAME=agent-7\nLANG=C.UTF-8\n" + strings.Join(l, "\n") + "\nTERM=xterm # " + m + "\n"
	}},
	{"said.history", "granite", func(lines []string, m string) string {
		l := wrapped(lines, m)
		return "2026-10-21 18:00:06 [running] [conv-1] alice said: " + l[0] + continued(l) + "\n"
	}},
	{"notes.md", "harbor", func(lines []string, m string) string {
		return strings.Join(wrapped(lines, m), "\n") + "\n"
	}},
	{"calls.log", "orchard", func(lines []string, m string) string {
		content := jsonString(m + " " + strings.Join(lines, "\n") + " " + m)
		return `2026-10-21 18:00:04.567 INFO  [running] [conv-1] alice tool call: {"tool":"write_file","args":{"path":"notes.txt","content":` + content + "}}\n"
	}},
	{"block.history", "meadow", func(lines []string, m string) string {
		l := wrapped(lines, m)
		var b strings.Builder
		b.WriteString("2026-10-21 18:00:03 [running] [conv-1] alice wrote config.yaml:")
		for _, x := range l {
			b.WriteString("\n    " + x)
		}
		return b.String() + "\n"
	}},
}

func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeContexts returns the files of one sample's agent folder.
func writeContexts(text string) map[string]string {
	lines := strings.Split(text, "\n")
	files := map[string]string{}
	for _, c := range agentContexts {
		files[c.file] = c.write(lines, c.marker)
	}
	return files
}

const interpreterRules = `{"rules": [
	{"match": "^(?P<agent>\\S+) was told: (?P<text>(?s).*)$", "reading": "told"},
	{"match": "^(?P<agent>\\S+) said: (?P<text>(?s).*)$", "reading": "said"}
]}`

// terms splits text as the index does (spec §6): maximal runs of letters and
// digits, lower-cased.
func terms(text string) []string {
	var out []string
	f := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range f {
		out = append(out, strings.ToLower(w))
	}
	return out
}

// randomPart is the part of a secret that must never show: the secret less a
// vendor prefix such as "ghp_" or "sk-ant-" (which may show, and says nothing).
var vendorPrefix = regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9]{0,9}[_-]){1,2}`)

// yamlKey is the name a secret of gitleaks' Kubernetes rule starts with
// ("password: …", ".dockercfg: >\n …"): the name is no secret.
var yamlKey = regexp.MustCompile(`^[\w.-]+:(?:[ \t]*(?:\||>[-+]?)\s+)?[ \t]*["']?`)

// urlHead is what a URL secret starts with that says where it is used, not
// the secret: its scheme, its host (no userinfo) and the words that start its
// path (/soap/v3.1/, /webhookb2/). Issue 28 asks URLs masked in their secret
// parts (userinfo, signature and token parameters, webhook paths), so the
// bar is over the rest; the rules tests check the host stays.
var urlHead = regexp.MustCompile(`^[a-z][a-z0-9+.-]*://[^/\s@]+/(?:[A-Za-z]+[0-9.]*/)*`)

// secretPart is the part of a sample's secret that must not show: a URL
// less its head, anything else whole.
func secretPart(secret string) string {
	if p := urlHead.FindString(secret); p != "" && len(secret)-len(p) >= 8 {
		return secret[len(p):]
	}
	return secret
}

func randomPart(secret string) string {
	secret = secretPart(secret)
	if p := yamlKey.FindString(secret); p != "" && len(secret)-len(p) >= 8 {
		secret = strings.TrimRight(secret[len(p):], `"'`)
	}
	if p := vendorPrefix.FindString(secret); p != "" && len(secret)-len(p) >= 8 {
		return secret[len(p):]
	}
	return secret
}

// windowLen is the bar's window: no 8 characters of a secret's random part in a row.
const windowLen = 8

// outcome is what the index gave for one sample.
type outcome struct {
	sample      secretSample
	family      string
	leakedIn    []string // context files whose returned text shows part of the secret
	fullLeak    bool     // some returned text shows the whole random part
	termLeak    []string // the secret's terms that a search finds
	changedIn   []string // for a false positive: context files where a secret was hidden
	pathsIn     []string // and where only a path outside the run was (as spec §8 asks)
	otherSecret bool     // a false positive that holds another rule's secret
	specNamed   bool     // a false positive that spec §8 says to hide: a credential name given a literal
	markersLost []string // markers that a search does not find in their context
	shown       []string // returned texts that show the leak or the change (for the log)
}

func (o *outcome) hidden() bool { return len(o.leakedIn) == 0 && len(o.termLeak) == 0 }

// TestSecretSamples writes every sample in every agent context of
// agentContexts beside a marker word, indexes the run with masking on
// (masking.HidingOutside, as `runls` runs it), and checks the bar: true
// positives hidden (no window of the random part in any returned text, and a
// search for the secret's own terms finds nothing), false positives unchanged,
// marker words findable. It logs the table by family (go test -v), and the
// samples that miss the bar with RUNLS_SAMPLES_VERBOSE=1.
func TestSecretSamples(t *testing.T) {
	if masking.RaceEnabled {
		t.Skip("minutes under the race detector: make test-go runs it without")
	}
	doc := loadSamples(t)
	rules := map[string]sampleRule{}
	for _, r := range doc.Rules {
		rules[r.ID] = r
	}
	outcomes := runSamples(t, doc.Samples, func(s secretSample) string { return familyOf(rules[s.Rule]) })
	// A false positive of one rule may be another's secret: what gitleaks'
	// whole default rule set (its own detect package) finds in it. Masking it
	// is right; the bar is over the others.
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	// So is one that holds a true positive's secret: detect-secrets' keyword
	// tables call `password = m{{h}o)p…}}` a secret in Go and not in C++,
	// where it wants quotes; a run's language is not known.
	var tpSecrets []string
	for _, s := range doc.Samples {
		if s.Kind == "tp" && len(s.Secret) >= 16 && !isLetters(s.Secret) {
			tpSecrets = append(tpSecrets, s.Secret)
		}
	}
	holdsSecret := func(text string) bool {
		for _, sec := range tpSecrets {
			if strings.Contains(text, sec) {
				return true
			}
		}
		return false
	}
	for i := range outcomes {
		if s := outcomes[i].sample; s.Kind == "fp" {
			outcomes[i].otherSecret = holdsSecret(s.Text) || len(d.DetectString(s.Text)) > 0
		}
	}
	markSpecNamed(outcomes)
	report(t, outcomes, familyOrder)
	checkExceptions(t, outcomes, sampleExceptions)
}

// sampleExceptions are the scanners' true positives that masking shows on
// purpose, each with the reason: what is left of issue 28's 17 leaks once
// each was looked at by spec §8's sentences. TestSecretSamples fails on a
// leak not named here, and on a name here that no longer leaks, so that
// the list stays what it says.
var sampleExceptions = map[string]string{
	"ds:npm/tp4":    "npm_xxxxxxxxxxx: a mask of x, a placeholder (spec §8: `***`, `<token>`), not a token",
	"ds:twilio/tp1": "SKxxxx…: a mask of x, a placeholder, not a key",
	"ds:twilio/tp2": "ACxxxx…: a mask of x, a placeholder, not an account id",
	"ds:aws_key/tp6": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY is AWS's documentation key, a placeholder " +
		"(gitleaks' allow-list reads …EXAMPLE… so too)",
	"ds:cloudant/tp9": "cloudant_key = \"abcdefghijabcdefghijabcd\": a vendor's name and `key` is no credential name on its " +
		"own (cache_key, sort_key, primary_key), and the value is the alphabet, which no entropy rule takes for a key",
}

// checkExceptions fails on a true positive that leaks and is not in
// exceptions, and on an exception that no longer leaks; it logs each
// exception that holds, with its reason.
func checkExceptions(t *testing.T, outcomes []outcome, exceptions map[string]string) {
	t.Helper()
	leaked := map[string]bool{}
	for _, o := range outcomes {
		if o.sample.Kind != "tp" || o.hidden() {
			continue
		}
		leaked[o.sample.ID] = true
		if reason, ok := exceptions[o.sample.ID]; ok {
			t.Logf("shown on purpose: %s: %s", o.sample.ID, reason)
			continue
		}
		t.Errorf("%s [%s] leaks in %v (terms %v) and is no named exception: secret %q", o.sample.ID, o.family, o.leakedIn, o.termLeak, o.sample.Secret)
	}
	for id := range exceptions {
		if !leaked[id] {
			t.Errorf("exception %s no longer leaks (or is no sample): take it out of the list", id)
		}
	}
}

// runSamples writes each sample into the agent contexts of its own agent
// folder, indexes the runs with masking on and returns what each gave.
func runSamples(t *testing.T, samples []secretSample, family func(secretSample) string) []outcome {
	t.Helper()
	interp, err := retriever.ParseInterpreter([]byte(interpreterRules))
	if err != nil {
		t.Fatal(err)
	}
	// Samples go into runs of chunk agents each: a search stats every file of
	// its run, so one run of all of them would make the test quadratic.
	const chunk = 1
	outcomes := make([]outcome, len(samples))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	errs := make(chan error, 1)
	scratch := scratchDir(t)
	for lo := 0; lo < len(samples); lo += chunk {
		hi := min(lo+chunk, len(samples))
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := runChunk(filepath.Join(scratch, fmt.Sprint(lo)), interp, samples[lo:hi], lo, family, outcomes[lo:hi]); err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	return outcomes
}

// specNamedAssignment is spec §8's sentence read on its own, apart from the
// masker's rules: a credential name, an assignment operator, and a value
// that is a literal (quoted, or a token that no call, reference or
// placeholder starts). A false positive of a scanner's rule that holds one
// (telegram_api_token = "9439:Aqct…", a token of the wrong shape for the
// vendor) is a value the spec says to hide whatever it looks like.
var specNamedAssignment = regexp.MustCompile(`(?i)(?:^|[^a-z0-9])[a-z0-9_.-]*(?:password|passwd|pwd|secrets?|token|(?:api|access|private|secret|signing|encryption)[_.-]?key|credentials?)["']?[ \t]*(?::=|=>|=|:)[ \t]*(?:"([^"\n]{3,})"|'([^'\n]{3,})'|([A-Za-z0-9+/_.=-]{3,})([^(A-Za-z0-9+/_.=-]|$))`)

// markSpecNamed marks the false positives that hold a specNamedAssignment.
func markSpecNamed(outcomes []outcome) {
	for i := range outcomes {
		s := outcomes[i].sample
		if s.Kind != "fp" {
			continue
		}
		for _, m := range specNamedAssignment.FindAllStringSubmatch(s.Text, -1) {
			v := m[1] + m[2] + m[3]
			if !strings.HasPrefix(v, "$") && !strings.Contains(v, "<") && !strings.Contains(v, "{") && !strings.Contains(v, "***") {
				outcomes[i].specNamed = true
			}
		}
	}
}

// scratchDir returns a folder for the runs, removed at the end: in memory
// (/dev/shm) where there is one, since the test writes some 40,000 small files
// and creating a file on these machines' disk takes a millisecond or two.
func scratchDir(t *testing.T) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "runls-samples-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// runChunk writes samples (the first is sample number first) into a run at
// root, indexes it and fills outs.
func runChunk(root string, interp *retriever.Interpreter, samples []secretSample, first int, family func(secretSample) string, outs []outcome) error {
	agentOf := func(i int) string { return fmt.Sprintf("s%04d", first+i) }
	for i, s := range samples {
		for name, content := range writeContexts(s.Text) {
			p := filepath.Join(root, "episode-1", agentOf(i), name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				return err
			}
			// Written long ago: a search checks the content of a file changed
			// in the last seconds, which would make every search read the run.
			if err := os.Chtimes(p, longAgo, longAgo); err != nil {
				return err
			}
		}
	}
	ctx := context.Background()
	ix, err := retriever.Open(ctx, retriever.Options{Root: root, Interpreter: interp, Masker: masking.HidingOutside(root)})
	if err != nil {
		return err
	}
	defer ix.Close()
	if _, err := ix.Refresh(ctx, nil); err != nil {
		return err
	}
	for i, s := range samples {
		o, err := evaluate(ctx, ix, agentOf(i), s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.ID, err)
		}
		o.family = family(s)
		outs[i] = o
	}
	return nil
}

var longAgo = time.Date(2026, 10, 21, 18, 0, 0, 0, time.UTC)

// search returns every piece of agent's evidence that holds one of the terms.
func search(ctx context.Context, ix *retriever.Index, agent string, ts []string) ([]retriever.Item, error) {
	ts = slices.Compact(slices.Sorted(slices.Values(ts)))
	var items []retriever.Item
	for len(ts) > 0 {
		n := min(len(ts), 1000) // a query holds at most 1024 distinct terms
		res, err := ix.Search(ctx, retriever.Request{Query: strings.Join(ts[:n], " "), Agent: agent,
			Episode: "episode-1", Conversation: "conv-1", TopK: 1000})
		if err != nil {
			return nil, err
		}
		items = append(items, res.Items...)
		ts = ts[n:]
	}
	return items, nil
}

func evaluate(ctx context.Context, ix *retriever.Index, agent string, s secretSample) (outcome, error) {
	o := outcome{sample: s}
	// What the files hold around the secret: the contexts written with the
	// secret replaced by a byte that is in no term and no window.
	background := s.Text
	if s.Kind == "tp" {
		background = strings.ReplaceAll(s.Text, s.Secret, "\x00")
	}
	var bg strings.Builder
	for _, content := range writeContexts(background) {
		bg.WriteString(content)
		bg.WriteByte('\x00')
	}
	bgText := bg.String()

	all := append(terms(bgText), "secret", "path")
	if s.Kind == "tp" {
		all = append(all, terms(s.Secret)...)
	}
	items, err := search(ctx, ix, agent, all)
	if err != nil {
		return o, err
	}

	if s.Kind == "tp" {
		random := randomPart(s.Secret)
		var windows []string
		if len(random) <= windowLen {
			windows = []string{random}
		} else {
			for k := 0; k+windowLen <= len(random); k++ {
				windows = append(windows, random[k:k+windowLen])
			}
		}
		windows = slices.DeleteFunc(windows, func(w string) bool { return strings.Contains(bgText, w) })
		leaked := map[string]bool{}
		for _, it := range items {
			for _, w := range windows {
				if strings.Contains(it.Text, w) {
					leaked[filepath.Base(it.File)] = true
					o.shown = append(o.shown, filepath.Base(it.File)+": "+it.Text)
					o.fullLeak = o.fullLeak || strings.Contains(it.Text, random)
					break
				}
			}
		}
		o.leakedIn = slices.Sorted(mapKeys(leaked))
		// The secret's own terms: not around it, and not a placeholder's
		// ("<secret>" holds the term secret).
		bgTerms := map[string]bool{}
		for _, w := range terms(bgText + " " + masking.SecretPlaceholder + " " + masking.PathPlaceholder) {
			bgTerms[w] = true
		}
		var own []string
		for _, w := range terms(secretPart(s.Secret)) {
			if !bgTerms[w] {
				own = append(own, w)
			}
		}
		if len(own) > 0 {
			found, err := search(ctx, ix, agent, own)
			if err != nil {
				return o, err
			}
			if len(found) > 0 {
				in := map[string]bool{}
				for _, it := range found {
					for _, w := range terms(it.Text) {
						in[w] = true
					}
				}
				for _, w := range slices.Compact(slices.Sorted(slices.Values(own))) {
					if in[w] {
						o.termLeak = append(o.termLeak, w)
					}
				}
			}
		}
	} else {
		changed, paths := map[string]bool{}, map[string]bool{}
		for _, it := range items {
			f := filepath.Base(it.File)
			switch {
			case strings.Contains(it.Text, masking.SecretPlaceholder) && !strings.Contains(s.Text, masking.SecretPlaceholder):
				changed[f] = true
			case strings.Contains(it.Text, masking.PathPlaceholder) && !strings.Contains(s.Text, masking.PathPlaceholder):
				paths[f] = true
			default:
				continue
			}
			o.shown = append(o.shown, f+": "+it.Text)
		}
		o.changedIn = slices.Sorted(mapKeys(changed))
		o.pathsIn = slices.Sorted(mapKeys(paths))
	}

	// The markers are among the terms searched: each must be in a returned
	// text of its context (what is returned is what was indexed).
	for _, c := range agentContexts {
		ok := false
		for _, it := range items {
			ok = ok || filepath.Base(it.File) == c.file && slices.Contains(terms(it.Text), c.marker)
		}
		if !ok {
			o.markersLost = append(o.markersLost, c.marker)
		}
	}
	return o, nil
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// familyStats counts one family's outcomes.
type familyStats struct {
	tp, hidden, partial, full int
	fp, changed, paths        int
	fpOther, changedOther     int // the false positives that are other rules' secrets
	fpNamed, changedNamed     int // and those a credential name announces (spec §8)
	markersLost               int
}

func report(t *testing.T, outcomes []outcome, familyOrder []string) {
	t.Helper()
	stats := map[string]*familyStats{}
	var total familyStats
	byContext := map[string]int{}
	for _, o := range outcomes {
		st := stats[o.family]
		if st == nil {
			st = &familyStats{}
			stats[o.family] = st
		}
		for _, s := range []*familyStats{st, &total} {
			if o.sample.Kind == "tp" {
				s.tp++
				switch {
				case o.hidden():
				case o.fullLeak:
					s.full++
				default:
					s.partial++
				}
				if o.hidden() {
					s.hidden++
				}
			} else {
				changed := len(o.changedIn) > 0
				switch {
				case o.otherSecret:
					s.fpOther++
					if changed {
						s.changedOther++
					}
				case o.specNamed:
					s.fpNamed++
					if changed {
						s.changedNamed++
					}
				default:
					s.fp++
					if changed {
						s.changed++
					} else if len(o.pathsIn) > 0 {
						s.paths++
					}
				}
			}
			if len(o.markersLost) > 0 {
				s.markersLost++
			}
		}
		for _, f := range o.leakedIn {
			byContext[f]++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| family | true positives hidden | leak whole / in part | false positives over-masked | only a path hidden | other rules' secrets masked | named by a credential (§8) masked |\n|---|---|---|---|---|---|---|\n")
	row := func(name string, s *familyStats) {
		fmt.Fprintf(&b, "| %s | %d of %d (%s) | %d / %d | %d of %d (%s) | %d | %d of %d | %d of %d |\n", name, s.hidden, s.tp, pct(s.hidden, s.tp),
			s.full, s.partial, s.changed, s.fp, pct(s.changed, s.fp), s.paths, s.changedOther, s.fpOther, s.changedNamed, s.fpNamed)
	}
	for _, f := range familyOrder {
		if s := stats[f]; s != nil {
			row(f, s)
		}
	}
	for f, s := range stats {
		if !slices.Contains(familyOrder, f) {
			row(f, s)
		}
	}
	row("**all**", &total)
	all, allChanged := total.fp+total.fpOther+total.fpNamed, total.changed+total.changedOther+total.changedNamed
	fmt.Fprintf(&b, "\nfalse positives over-masked, counting other rules' secrets and named values: %d of %d (%s); counting named values: %d of %d (%s)\n",
		allChanged, all, pct(allChanged, all), total.changed+total.changedNamed, total.fp+total.fpNamed, pct(total.changed+total.changedNamed, total.fp+total.fpNamed))
	fmt.Fprintf(&b, "samples with a marker word lost: %d of %d\n", total.markersLost, len(outcomes))
	var ctxs []string
	for _, c := range agentContexts {
		ctxs = append(ctxs, fmt.Sprintf("%s %d", c.file, byContext[c.file]))
	}
	fmt.Fprintf(&b, "true positives leaking, by context: %s\n", strings.Join(ctxs, ", "))
	t.Log(b.String())

	if os.Getenv("RUNLS_SAMPLES_VERBOSE") != "" {
		sort.SliceStable(outcomes, func(i, j int) bool { return outcomes[i].family < outcomes[j].family })
		for _, o := range outcomes {
			if o.hidden() && len(o.changedIn) == 0 && len(o.pathsIn) == 0 && len(o.markersLost) == 0 {
				continue
			}
			if o.sample.Kind == "tp" && !o.hidden() {
				t.Logf("LEAK %s [%s] in %v terms %v: secret %q text %q\n\t%s", o.sample.ID, o.family, o.leakedIn, o.termLeak,
					o.sample.Secret, o.sample.Text, strings.Join(o.shown, "\n\t"))
			}
			if (len(o.changedIn) > 0 || len(o.pathsIn) > 0) && !o.otherSecret && !o.specNamed {
				t.Logf("CHANGED %s [%s] in %v, paths in %v: text %q\n\t%s", o.sample.ID, o.family, o.changedIn, o.pathsIn, o.sample.Text, strings.Join(o.shown, "\n\t"))
			}
			if len(o.markersLost) > 0 {
				t.Logf("MARKER LOST %s [%s]: %v in %q", o.sample.ID, o.family, o.markersLost, o.sample.Text)
			}
		}
	}

	if got := float64(total.hidden) / float64(total.tp); got < minHidden {
		t.Errorf("%d of %d true positives hidden (%s), want at least %.1f%%", total.hidden, total.tp, pct(total.hidden, total.tp), minHidden*100)
	}
	if got := float64(total.changed) / float64(total.fp); got > maxOverMasked {
		t.Errorf("%d of %d false positives changed (%s), want at most %.1f%%", total.changed, total.fp, pct(total.changed, total.fp), maxOverMasked*100)
	}
	if total.markersLost > 0 {
		t.Errorf("%d samples lost a marker word beside them", total.markersLost)
	}
}

func pct(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

func isLetters(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}
