package masking

import (
	"strings"
	"testing"
)

// Fake credentials of the right shapes, built so that no literal token sits in the source.
var (
	alnum36 = "q8Xr2TkLm9ZpW4vN7bYc1sJd6HfGa3Ue5Ko0"
	ghp     = "ghp_" + alnum36
	awsID   = "AKIA" + "Q3EGRKTZL7WNXP2V"
	awsKey  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9f3k2a1B" // 40 chars
	slackB  = "xoxb-" + "2623594206564-2343594206574-FGqddMF8t08v8N7Oq4i57vs1"
	jwt     = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." +
		"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0" + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemBlock = "-----BEGIN RSA PRIVATE KEY-----\n" +
		"MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n" +
		"KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm\n" +
		"-----END RSA PRIVATE KEY-----"
)

// Text that no rule may touch.
var (
	uuid       = "123e4567-e89b-12d3-a456-426614174000"
	commitHash = "9650fc0e4b1f0c2a3d1e5b7f8a9c0d1e2f3a4b5c"
	imageB64   = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	words      = "Alice said the build passed and the tokenizer counted 512 tokens; no secrets here."
)

type ruleCase struct {
	in, want string // want == in: nothing is hidden
}

func same(s string) ruleCase { return ruleCase{s, s} }

// ruleCases holds, per rule name, examples for that rule alone.
var ruleCases = map[string][]ruleCase{
	"private-key-pem": {
		{"key:\n" + pemBlock + "\nafter", "key:\n<secret>\nafter"},
		{`"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ\n-----END PRIVATE KEY-----\n"`, `"private_key": "<secret>\n"`},
		same("-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----"),
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nstill", "<secret>"},
		same("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"),
		same("-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----"),
	},
	"aws-access-key-id": {
		{"id " + awsID + " used", "id <secret> used"},
		{"ASIA" + "Y34FZKBOKMUTVV7A,", "<secret>,"},
		{"AKIA" + "ZZZZZZZZZZZZZZZZ", "<secret>"},
		same("TODAYINASIAASACKOFRICEFELLOVER"),
		same("AKIA" + "short"),
		same("aws_access_key: AKIA" + "IOSFODNN7EXAMPLE"),
	},
	"aws-secret-access-key": {
		{"aws_secret_access_key = " + awsKey, "aws_secret_access_key = <secret>"},
		{`AWS_SECRET_ACCESS_KEY="` + awsKey + `"`, `AWS_SECRET_ACCESS_KEY="<secret>"`},
		same("aws_secret_access_key = tooShort"),
		same("aws region is us-east-1"),
	},
	"discord-webhook": {
		{"https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz_0123456789-abcdef", "https://discord.com/api/webhooks/<secret>"},
		same("https://example.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz"),
	},
	"telegram-bot-token": {
		{"bot 123456789:AAH" + "dqTcvCH1vGWJxfSeofSAs0K5PALDsawq x", "bot <secret> x"},
		same("at 12:34:AA the build ran"),
	},
	"groq-api-key": {
		{"gsk_" + alnum36 + "abcdefghijkl", "<secret>"},
		same("gsk_short"),
	},
	"xai-api-key": {
		{"xai-" + alnum36 + alnum36, "<secret>"},
		same("xai-grok-model"),
	},
	"authorization-header": {
		{"Authorization: Bearer abc123DEF456ghi", "Authorization: Bearer <secret>"},
		{`{"authorization": "Basic dXNlcjpwYXNzd29yZA=="}`, `{"authorization": "Basic <secret>"}`},
		{`-H "AUTHORIZATION: Token Zx81kLmn0" x`, `-H "AUTHORIZATION: Token <secret>" x`},
		{"Authorization: Bearer <secret>", "Authorization: Bearer <secret>"},
		same("Authorization: required"),
		same("the authorization header is missing"),
	},
	"bearer-token": {
		{"using bearer 0123456789abcdefABCD now", "using bearer <secret> now"},
		same("bearer token expired"),
		same("Bearer authentication-is-required-here"),
	},
	"url-userinfo": {
		{"postgres://admin:s3cr3t@db.local:5432/app", "postgres://<secret>@db.local:5432/app"},
		{"redis://:p@ss@cache:6379", "redis://<secret>@cache:6379"},
		{"https://cafebabe:deadbeef@gems.contribsys.com/", "https://<secret>@gems.contribsys.com/"},
		{"https://" + alnum36 + "@github.com/o/r.git", "https://<secret>@github.com/o/r.git"},
		same("mail alice@example.com or see https://example.com/a@b"),
		same("git clone git@github.com:org/repo.git"),
		same("ssh://git@github.com/org/repo.git"),
		same("https://user:${PASSWORD}@db/x"),
		{"redis://coca:Hmabe3184#@db.internal:5432/app", "redis://<secret>@db.internal:5432/app"},
	},
	"url-signature": {
		{"https://acc.blob.core.windows.net/c/f?sv=2020-08-04&ss=b&sig=" + alnum36 + "%3D x", "https://acc.blob.core.windows.net/c/f?sv=2020-08-04&ss=b&sig=<secret> x"},
		{"https://b.s3.amazonaws.com/k?X-Amz-Date=20261021&X-Amz-Signature=" + commitHash + "&x=1", "https://b.s3.amazonaws.com/k?X-Amz-Date=20261021&X-Amz-Signature=<secret>&x=1"},
		{"https://chat.googleapis.com/v1/spaces/AAAA/messages?key=AIzaSy" + alnum36[:30] + "&t=1", "https://chat.googleapis.com/v1/spaces/AAAA/messages?key=<secret>&t=1"},
		same("https://example.com/search?q=signature&key=short"),
		same("https://example.com/?sig=${SIG}"),
		same("monkey=banana and sig=abcdefgh12345678 without a query"),
	},
	"webhook-path": {
		{"POST https://x.webhook.office.com/webhookb2/3f2a9c1e-7b4d-4e8a-9f1c-2d3e4f5a6b7c@9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4/IncomingWebhook/" + alnum36[:32] + "/0a1b2c3d ok",
			"POST https://x.webhook.office.com/webhookb2/<secret> ok"},
		{"https://chat.example.com/hooks/" + "x8k3m9q2w7e5r1t6y4u0i3o8p2", "https://chat.example.com/hooks/<secret>"},
		same("https://api.github.com/repos/o/r/hooks/12345678"),
		same("see the /hooks/ folder and /webhook/README.md"),
	},
	"prefixed-token": {
		{"key sk-proj-" + alnum36 + alnum36 + " ok", "key <secret> ok"},
		{"dckr_pat_" + alnum36[:27] + ",", "<secret>,"},
		{"OCTO=odt_" + alnum36 + `\n`, `OCTO=<secret>\n`},
		{"api-" + alnum36[:32], "<secret>"},
		same("tool call_AbC123dEf456GhI789jKl012 returned msg_01XFDUDYJgAACzvnptvVoYEL"),
		same("toolu_01A09q90qw90lq917835lq9 chatcmpl-AbCdEf1234567890GhIjKlMnOpQrStU"),
		same("resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b"),
		same(`"integrity": "sha512-9hZ9qXsA2P+UY8u1q2Jf8nD8l3cF0gW7aXq8c1Rr0Jz3YvRk0y2G5rX7pQ8mN0L1kP4sT6vW9xZ2bC4dE6fG8h=="`),
		same("TestMaskingHidesEverything2WithLongNames_and_more_words build_20261021_183000_final_release"),
		same("req-" + uuid + " the well-known error-prone test-suite, v1.2.3-rc1"),
		same("kebab-case-sentence-used-in-a-slug-for-the-docs-page-2024"),
		same("├── R21A-A-V010SP13RC181024R16900-CN-B_250K-Release-OTA-97B6C6C59241976086FABDC41472150C.bfu"),
		same(`div[data-cel-widget="desktop-rhf_SponsoredProductsRemoteRHFSearchEXPSubsK2ClickPagination"]`),
	},
	"pem-base64": {
		{"tls.key: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVBcDN4 next", "tls.key: <secret> next"},
		same("tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUZhekNDQTFPZ0F3SUJBZ0lVRGVt"),
	},
	"vendor-prefix-token": {
		{"token glptt-" + alnum36 + "abcd ok", "token <secret> ok"},
		{"glcbt-helloworld380_testin", "<secret>"},
		{"sq0csp-" + alnum36 + `\abcd x`, "<secret> x"},
		{`"glpat-` + alnum36[:20] + `\n"`, `"<secret>\n"`},
		{"gloas-" + alnum36 + alnum36[:28] + ".", "<secret>."},
		same("glpat-xxxxxxxxxxxxxxxxxxxx"),
		same("glimt-my-tokens_are-correctAB and glptt-hellOworld380_testin, gloas-checking_Length-Is-checking_Length-Is-"),
		same("glpat-short and sq0csp-"),
		same("the tglpat-" + alnum36 + " word"),
	},
	"hex-datacenter-key": {
		{"key 343ea45721923ed956e2b38c31db76aa-us30 ok", "key <secret> ok"},
		same("md5 343ea45721923ed956e2b38c31db76aa and us-east-1"),
	},
	"secret-assignment": {
		{`{"password": "hunter2", "user": "bob"}`, `{"password": "<secret>", "user": "bob"}`},
		{"DB_PASSWORD=correct-horse", "DB_PASSWORD=<secret>"},
		{"password: hunter2", "password: <secret>"},
		{"  client_secret: 'Zm9vYmFyYmF6MTIz'", "  client_secret: '<secret>'"},
		{"OPENAI_API_KEY=abc123def456ghi789", "OPENAI_API_KEY=<secret>"},
		{"apiKey := \"Q2xhdWRlIGlzIGdyZWF0\"", "apiKey := \"<secret>\""},
		{`{\"secret\": \"a1b2c3d4e5f6\"}`, `{\"secret\": \"<secret>\"}`},
		{"x-api-key: Ab12Cd34Ef56", "x-api-key: <secret>"},
		{"https://h/x?user=a&pwd=letmein&y=1", "https://h/x?user=a&pwd=<secret>&y=1"},
		{"db_pass=tiger", "db_pass=<secret>"},
		same(`{"max_tokens": 4096, "tokenizer": "cl100k_base", "input_tokens": 12}`),
		same("token_type: bearer_access_token_v2"),
		same("--- PASS: TestMasking (0.01s)"),
		same("password: <secret>"),
		same("PASSWORD=${DB_PASSWORD}"),
		same("-e SUMO_ACCESS_KEY=`etcdctl get /sumologic_secret`"),
		same("password: null"),
		same("token: expired"),
		same("monkey: banana123ABC"),
		same("PWD=/run/x/episode-1"),
		same("api_key_name: production-key-2024"),
		// Spec §8: a credential name hides its value whatever it looks like.
		{"api_key=zqxapikeyvalue123", "api_key=<secret>"},
		{"secret=zqxsecretvalue456", "secret=<secret>"},
		{"token=zqxtokenvalue789", "token=<secret>"},
		{"export OPENAI_API_KEY=sk-abcdef…", "export OPENAI_API_KEY=<secret>"},
		{`{"apiKey": "zqxapikeyvalue123"}`, `{"apiKey": "<secret>"}`},
		{"X-Auth-Token: zqxtokenvalue789", "X-Auth-Token: <secret>"},
		{"INSTAMOJO_API_KEY=ZrGOAlxmTpwordkeyQ9Z", "INSTAMOJO_API_KEY=<secret>"},
		{"CLIENT-SECRET: abcdefghijklmnopqrstuvwxyz", "CLIENT-SECRET: <secret>"},
		{`password = "correct horse battery staple"`, `password = "<secret>"`},
		{"secret: zqxsecretvalue", "secret: <secret>"},
		// Plainly not a literal.
		same("password = getPassword()"),
		same(`passwordLabel: "Password:"`),
		same(`this.addPassword = "#add-password"`),
		same("token=<token>"),
		same("token=$TOKEN"),
		same("password=changeme"),
		same("password=***"),
		same("token: string"),
		same("api_key: Optional[str] = None"),
		same("const userToken = accessToken;"),
		same("const token = await getToken(bob);"),
		same("secret = new Secret(key)"),
		same(`password = os.environ["DB_PASSWORD"]`),
		same("password = secrets.token_hex(16)"),
		same("token = self.token"),
		same("secretKey: api-key"),
		same("Password: the one in the vault"),
		same(`{"content":"passwordLabel: \"Password:\" next"}`),
		same(`passwordLabel: "Password:" next"`),
		same("FIFI_PASSWORD= harbor"),
		{`{password:"hunter2"}`, `{password:"<secret>"}`},
		{`"password: hunter2"`, `"password: <secret>"`},
	},
	"secret-statement": {
		{`password "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}";`, `password "<secret>";`},
		{`  secrete 'Zx81kLmn0qPw';`, `  secrete '<secret>';`},
		{`server { auth_token "Zx81kLmn0qPw"; }`, `server { auth_token "<secret>"; }`},
		same(`password "";`),
		same(`label "Password:";`),
		same(`printf("password");`),
		same(`set password "${DB_PASSWORD}";`),
		same(`password_file "/etc/secret.txt";`),
		same(`x="password" "abc";`),
	},
	"secret-call": {
		{`std::string secret("` + "Zx81kLmn0qPw" + `");`, `std::string secret("<secret>");`},
		{`secrete.assign('` + "Zx81kLmn0qPw" + `', 17)`, `secrete.assign('<secret>', 17)`},
		same(`user = getPassword("alice")`),
		same(`os.getenv("API_KEY")`),
		same(`token("x")`),
	},
	"secret-comparison": {
		{`if ("` + "Zx81kLmn0qPw" + `" == password) {`, `if ("<secret>" == password) {`},
		{`if ('` + "Zx81kLmn0qPw" + `' !== my_api_key)`, `if ('<secret>' !== my_api_key)`},
		same(`if ("alice" == username) {`),
		same(`if ("" == password) {`),
	},
	"artifactory-token": {
		{"X-JFrog-Art-Api: AKC" + "p8k9rT2mQ7xW3", "X-JFrog-Art-Api: <secret>"},
		{"=AP6" + "xq9rT2mQ7", "=<secret>"},
		same("APIs and APPLICATIONS"),
		same("AKCshort"),
	},
	"softlayer-key": {
		{"softlayer_api_key: " + strings.Repeat("a1b2", 16), "softlayer_api_key: <secret>"},
		same(`SOFTLAYER_APIKEY: "insert_key_here"`),
	},
	"softlayer-url": {
		{"http://api.softlayer.com/soap/v3.1/" + strings.Repeat("a1b2", 16), "http://api.softlayer.com/soap/v3.1/<secret>"},
		same("see http://api.softlayer.com/soap/v3/ for the API"),
	},
	"slack-token": {
		{"xoxp-" + "523423-234243-234233-e039d02840a0b9379c", "<secret>"},
		same("xoxp-1234567890"),
	},
	"jwt": {
		{"token=" + jwt + " ok", "token=<secret> ok"},
		{"eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9" + "." + "eyJuYW1lIjoiSm9lIiwKInN0YXR1cyI6ImVtcGxveWVlIgp9", "<secret>"},
		same("eyJhbasdGciOiJIUaddasdasfs.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ikpv"),
		same("eyJhbGciOiJIUzI1NiJ9 alone is a header, not a token"),
	},
	"discord-bot-token": {
		{"bot MTk4NjIyNDgzNDcxOTI1MjQ4" + ".Cl2FMQ." + "ZnCjm1XVW7vRze4b7Cq4se7kKWs ok", "bot <secret> ok"},
		same("NTP and ODBC.config.files"),
	},
	"cli-secret-flag": {
		{"mysql --password hunter2 -u root", "mysql --password <secret> -u root"},
		{"gh auth login --with-token --token=gho_x1 now", "gh auth login --with-token --token=<secret> now"},
		same("run --token-file tok.txt"),
		same("cmd --password --verbose"),
	},
}

// maskerOf returns a masker of the one rule named.
func maskerOf(t *testing.T, name string) *CredentialMasker {
	t.Helper()
	for _, r := range compiledRules {
		if r.name == name {
			return newCredentialMasker([]rule{r}, nil)
		}
	}
	t.Fatalf("no rule %q", name)
	return nil
}

func maskString(m Masker, text string) string {
	spans, _ := m.Mask(text)
	out, _ := Apply(text, spans)
	return out
}

func TestRules(t *testing.T) {
	for _, spec := range ruleTable {
		t.Run(spec.name, func(t *testing.T) {
			cases := ruleCases[spec.name]
			var pos, neg int
			m := maskerOf(t, spec.name)
			for _, c := range cases {
				if c.want == c.in {
					neg++
				} else {
					pos++
				}
				if got := maskString(m, c.in); got != c.want {
					t.Errorf("mask(%q)\n got %q\nwant %q", c.in, got, c.want)
				}
			}
			if pos == 0 || neg == 0 {
				t.Errorf("rule %s has %d positive and %d negative examples; it needs both", spec.name, pos, neg)
			}
		})
	}
	for name := range ruleCases {
		found := false
		for _, spec := range ruleTable {
			found = found || spec.name == name
		}
		if !found {
			t.Errorf("examples for unknown rule %q", name)
		}
	}
}

// TestRulesKeywords checks the pre-filter against each rule: every positive
// example contains one of the rule's keywords, or the rule could never fire.
func TestRulesKeywords(t *testing.T) {
	for _, spec := range ruleTable {
		for _, c := range ruleCases[spec.name] {
			if c.in == c.want {
				continue
			}
			in := c.in
			if spec.fold {
				in = strings.ToLower(in)
			}
			ok := false
			for _, kw := range spec.keywords {
				if spec.fold {
					kw = strings.ToLower(kw)
				}
				ok = ok || strings.Contains(in, kw)
			}
			if !ok {
				t.Errorf("%s: example %q holds none of the keywords %q", spec.name, c.in, spec.keywords)
			}
		}
	}
}

// TestNothingOrdinaryIsMasked runs the whole masker on text that must stay as written.
func TestNothingOrdinaryIsMasked(t *testing.T) {
	m := HidingOutside("/runs/r1")
	for _, text := range []string{
		uuid, "commit " + commitHash, imageB64, words,
		"wrote /runs/r1/episode-1/alice/notes.txt and /runs/r1/episode-2",
		"see docs/a/b.md and ./x/y and ../z, 24/7, and/or 1/2",
		"https://example.com/path/to/page?q=1#frag",
		"2026-10-21 18:00:00 INFO Alice chat started",
		"Alice was told: please summarise the token budget (4096 tokens max).",
		"sha256:" + strings.Repeat("ab12", 16),
		"PASS\nok  \truns/masking\t0.01s",
	} {
		if got := maskString(m, text); got != text {
			t.Errorf("mask(%q) = %q, want it unchanged", text, got)
		}
	}
}

func TestKeyWords(t *testing.T) {
	for _, c := range []struct {
		key  string
		want string
	}{
		{"DB_PASSWORD", "db password"},
		{"apiKey", "api key"},
		{"APIKey", "api key"},
		{"x-api-key", "x api key"},
		{"clientSecret2", "client secret2"},
		{"--password", "password"},
	} {
		if got := strings.Join(keyWords(c.key, nil), " "); got != c.want {
			t.Errorf("keyWords(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}
