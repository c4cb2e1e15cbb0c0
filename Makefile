# Outpost's entry points. `make demo` and `make test` are the README's two commands.
SHELL := /bin/bash
VERSION := $(shell node -p "require('./sdk/package.json').version")
GO_PKG := github.com/outpost-dev/outpost
LDFLAGS := -s -w -buildid= -X $(GO_PKG)/agent-go/internal/version.Version=$(VERSION)
HOST_PLATFORM := $(shell node -p "process.platform === 'win32' ? 'windows' : process.platform")
HOST_ARCH := $(shell node -p "process.arch")
HOST_AGENT := sdk/bin/$(HOST_PLATFORM)-$(HOST_ARCH)/outpost

.PHONY: setup build agent sdk demo test test-go test-ts lint fuzz fuzz-short dist bench properties-nightly clean test-windows

## setup: install the Go modules and npm packages the build and tests need
setup: node_modules/.package-lock.json
	go mod download

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

## build: the agent for this machine and the SDK
build: setup agent sdk

agent:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(HOST_AGENT) ./agent-go/cmd/outpost

sdk: setup
	npm run build -w @outpost/sdk

## demo: Outpost's main job on the local agent (no SSH): an agent's tools run through LocalExecutionEnv
demo: build
	node tools/demo.mjs

## test: everything CI runs
test: build lint test-go fuzz-short test-ts

test-go:
	go vet ./...
	go test -race -count=1 ./...

test-ts: agent
	npx vitest run

lint: setup
	@unformatted=$$(gofmt -l agent-go); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	go vet ./...
	GOOS=windows go vet ./agent-go/... ./tools/windows/...
	GOOS=darwin go vet ./agent-go/...
	npx tsc -p tsconfig.json
	npx biome check .

fuzz-short:
	tools/fuzz.sh

## fuzz: a long fuzzing run of the frame decoder and request dispatch
fuzz:
	FUZZTIME=$${FUZZTIME_LONG:-60s} tools/fuzz.sh

## dist: static, reproducible agents for every platform plus a SHA-256 manifest
dist: setup
	VERSION=$(VERSION) LDFLAGS="$(LDFLAGS)" tools/dist.sh

## bench: per-operation latency and throughput, Outpost vs the in-process reference
bench: build
	node --import tsx tools/bench.ts

## test-windows: the conformance suite's Windows flavour, reference vs Windows agent, both under Wine (installs Wine)
test-windows: setup sdk
	tools/windows/test-windows.sh

## properties-nightly: the differential property tests at 50x the CI budget
properties-nightly: agent
	NUM_RUNS_SCALE=50 npx vitest run properties

clean:
	rm -rf sdk/dist sdk/bin
