# nexus — see README.md. `make demo` and `make test` are the two first commands.
GO      ?= go
BIN     := bin/nexus
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: build pools demo test vet deps bench fuzz clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/nexus

# Compiled pools of the example programs (C++), rebuilt when out of date.
pools:
	./scripts/build-pools.sh

# A scripted MCP session against testdata/combat, printed as a transcript.
demo: build pools
	./scripts/demo.sh $(BIN) testdata/combat

vet:
	$(GO) vet ./...

# Every test: unit, golden, fuzz seeds, and end-to-end tests that drive the
# real binary with real pools.
test: vet pools
	$(GO) test -race -count=1 -timeout 20m ./...

# What a fresh Debian machine needs for the pools and tests.
deps:
	./scripts/install-deps.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

FUZZTIME ?= 60s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzToPositional$$' -fuzztime $(FUZZTIME) ./internal/argmap

clean:
	rm -rf bin
