# `make test` runs every test of the project on a fresh machine: Go (with the
# race detector, vet and gofmt), the VS Code extension, the Neovim plugin,
# Emacs with Eglot, and runls mcp against the TypeScript MCP SDK's client.
# The editor scripts install what they need (npm packages, Debian packages, a
# current Neovim) when it is missing. `.ci/run` calls exactly this.

GO ?= go

# The runls binaries the tests start keep their index cache (spec §15) here,
# not in the user's cache folder.
export RUNLS_CACHE_DIR := $(or $(TMPDIR),/tmp)/runls-make-test-cache-$(shell id -u)

.PHONY: test test-go test-vscode test-neovim test-emacs test-mcp-ts lint fuzz-seeds build bench victorialogs

test: victorialogs test-go test-vscode test-neovim test-emacs test-mcp-ts

# The fleet's tests (spec §16) start a VictoriaLogs cluster of the pinned
# version, built once into a cache folder (about 90 s on a fresh machine).
# Where Go cannot build it, the fleet's tests skip, saying why.
victorialogs:
	bash fleet/scripts/victorialogs.sh build || echo "make: VictoriaLogs could not be built: the fleet's tests will skip"

lint:
	@bad=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$bad" ]; then echo "gofmt would change:"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...
	# runls builds, and its tests compile and vet, for macOS and Windows too
	# (they run on Linux; bench/serve is Linux's alone).
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...

test-go: lint
	$(GO) test -race -count=1 -timeout 25m ./...
	# masking's tests over every secret sample: minutes under the race detector.
	$(GO) test -count=1 -run 'TestSecretSamples|TestGeneratedSecrets|TestVendorRulesMatchGitleaks' ./masking

test-vscode:
	bash editors/vscode/scripts/test.sh

test-neovim:
	bash editors/neovim/scripts/test.sh

# Installs Debian's emacs-nox and elpa-eglot when Emacs with Eglot is missing.
test-emacs:
	bash editors/emacs/scripts/test.sh

test-mcp-ts:
	bash mcpserver/tsclient/test.sh

build:
	$(GO) build -o bin/runls ./cmd/runls

# Benchmarks: RUNLS_BENCH_SIZE=100MB (or 1GB) make bench
bench:
	$(GO) test -run XXX -bench . -benchtime 3x ./retriever ./masking
