# nexus — see README.md. `make demo` and `make test` are the two first commands.
GO      ?= go
BIN     := bin/nexus
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: build pools demo demo-deps test test-steps test-loaded self-contained vet cross deps bench fuzz fuzz-short clean morloc-corpus

# CGO_ENABLED=0: a static binary, without libc's pages in nexus's memory
# (net resolves names in Go); it runs on any Linux of its architecture.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/nexus

# Compiled pools of the example programs (C++), rebuilt when out of date.
pools:
	./scripts/build-pools.sh

# A scripted MCP session against testdata/plots (Python, R and C++ pools),
# printed as a transcript. It first installs what the pools need, as make
# test does (as root or through password-less sudo; otherwise it prints the
# command to run).
demo: demo-deps build pools
	./scripts/demo.sh $(BIN) testdata/plots

demo-deps:
	./scripts/install-deps.sh --pools

vet:
	$(GO) vet ./...

# macOS is where most Claude Desktop users are: nexus must build and vet there.
cross:
	GOOS=darwin GOARCH=amd64 $(GO) vet ./...
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/nexus

# Every test: unit, golden, fuzz seeds, and end-to-end tests that drive the
# real binary with real pools; the fast tier again in a copy of the
# repository with nothing beside it; then every fuzz target for a few
# seconds. deps first: on a fresh machine it installs what the tests need
# (as CI does); where all is there it only checks, in a second or two.
test: deps vet cross pools
	@$(MAKE) --no-print-directory test-steps

# make test's test steps, after its installs and checks. TESTTIMEOUT bounds
# each package's go test -race run.
# The e2e package is the long one: its morloc tests alone take about 9
# minutes with the race detector on 2 loaded CPUs, hence 30m.
TESTTIMEOUT ?= 30m
test-steps:
	$(GO) test -race -count=1 -timeout $(TESTTIMEOUT) ./...
	@# Every Go benchmark once, smallest sizes (-short), so none can rot.
	$(GO) test -short -count=1 -run '^$$' -bench . -benchtime 1x ./internal/...
	@$(MAKE) --no-print-directory self-contained
	@$(MAKE) --no-print-directory fuzz-short

# No test, script or Makefile rule reads outside the repository, so a fresh
# clone tests as this one does: go test -short ./... in a copy of the tracked
# files whose parent holds nothing else (TestNothingReachesOutsideTheRepository
# is the static half).
self-contained:
	@GO=$(GO) ./scripts/self-contained.sh

# make test's test steps with a busy loop on every CPU for the whole run
# (scripts/loaded.sh kills them at the end, however the run ends): the
# suite must pass on a loaded machine. make test does not run it.
test-loaded: deps vet cross pools
	@./scripts/loaded.sh $(MAKE) --no-print-directory test-steps TESTTIMEOUT=90m

# What a fresh Debian machine needs for the pools and tests.
deps:
	./scripts/install-deps.sh

# The benchmark driver (cmd/nexus-bench, docs/performance.md): nexus over
# stdio and HTTP beside its floors, one table on stdout; then the Go
# micro-benchmarks. BENCHFLAGS go to the driver (e.g. BENCHFLAGS='-sizes 1,10').
BENCHFLAGS ?=
bench: build pools
	$(GO) run ./cmd/nexus-bench -nexus $(BIN) $(BENCHFLAGS)
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...

# Every fuzz target, as package:Target. Their seed corpora (f.Add in the
# code, testdata/fuzz/<Target>/ beside it) run in every `go test`; an input
# that once failed goes into testdata/fuzz and stays a regression test.
FUZZ_TARGETS := \
	internal/mcp:FuzzLineReader \
	internal/mcp:FuzzDispatch \
	internal/mcp:FuzzDecodeLine \
	internal/manifest:FuzzParseType \
	internal/eval:FuzzEval \
	internal/eval:FuzzParseJSON \
	internal/argmap:FuzzToPositional \
	internal/argmap:FuzzFastPositional \
	internal/argmap:FuzzValidateAgainstJSONSchema \
	internal/argmap:FuzzResultValue \
	internal/jsontext:FuzzWhole \
	internal/jsontext:FuzzAppendString \
	internal/jsontext:FuzzCanonical \
	internal/ndarray:FuzzAppendReal \
	internal/argmap:FuzzFromCLI \
	internal/argmap:FuzzReadForm \
	internal/pool:FuzzPoolFrames \
	internal/morlocwire:FuzzResult \
	internal/morlocwire:FuzzArg \
	internal/clientconfig:FuzzJSONAddRemove \
	internal/clientconfig:FuzzTOMLAddRemove

# make fuzz: each target for FUZZTIME, one after the other (scripts/fuzz.sh
# runs again a target that only hit Go 1.26's fuzztime deadline race).
FUZZTIME ?= 60s
fuzz:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh $(FUZZ_TARGETS)

# make test runs each target for FUZZSHORT more: new inputs on every run, at
# a bounded cost (about ten seconds a target, with the builds).
FUZZSHORT ?= 10s
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZSHORT)

# Rebuild testdata/morloc/*/manifest.json with the real morloc 0.98.2
# compiler, which must be installed (morloc's own build installs it), each
# by its own build.sh where it has one. A manifest that differs only in its
# build time stays as committed. The corpus is checked in: `make test` never
# runs this. After it, refresh the derived expectations:
# go test ./internal/argmap -run TestMorlocCorpus -update-morloc
morloc-corpus:
	./testdata/morloc/build.sh

clean:
	rm -rf bin
