# `make test` runs every test of the project on a fresh machine: Go (with the
# race detector, vet and gofmt), the VS Code extension and the Neovim plugin.
# The editor scripts install what they need (npm packages, Debian packages, a
# current Neovim) when it is missing. `.ci/run` calls exactly this.

GO ?= go

.PHONY: test test-go test-vscode test-neovim lint fuzz-seeds build bench

test: test-go test-vscode test-neovim

lint:
	@bad=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$bad" ]; then echo "gofmt would change:"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...

test-go: lint
	$(GO) test -race -count=1 ./...

test-vscode:
	bash editors/vscode/scripts/test.sh

test-neovim:
	bash editors/neovim/scripts/test.sh

build:
	$(GO) build -o bin/runls ./cmd/runls

# Benchmarks: RUNLS_BENCH_SIZE=100MB (or 1GB) make bench
bench:
	$(GO) test -run XXX -bench . -benchtime 3x ./retriever ./masking
