# Outpost's entry points. `make demo` and `make test` are the README's two commands.
SHELL := /bin/bash
# Node 22 (>= 22.19) or 24: one line and a stop on anything older (tools/node-check.mjs; README "Node versions").
NODE_CHECK := $(shell node tools/node-check.mjs 2>&1)
ifneq ($(NODE_CHECK),)
$(error $(NODE_CHECK))
endif
VERSION := $(shell node -p "require('./sdk/package.json').version")
GO_PKG := github.com/outpost-dev/outpost
LDFLAGS := -s -w -buildid= -X $(GO_PKG)/agent-go/internal/version.Version=$(VERSION)
HOST_PLATFORM := $(shell node -p "process.platform === 'win32' ? 'windows' : process.platform")
HOST_ARCH := $(shell node -p "process.arch")
HOST_AGENT := sdk/bin/$(HOST_PLATFORM)-$(HOST_ARCH)/outpost

.PHONY: setup deps system-deps build agent sdk cli pi demo test test-go test-ts test-package test-windows lint fuzz fuzz-short dist bench bench-large properties-nightly nightly-summary test-unprivileged mutation mutation-save mutation-summary test-wan bench-wan clean test-containers

## setup: everything the build and the tests need: the npm packages and Go modules (`deps`) and the Debian packages
## of the test suites (`system-deps`)
setup: deps system-deps

## deps: the npm packages and Go modules the build needs (all `make demo` needs besides Go, Node and make)
deps: node_modules/.package-lock.json
	go mod download

## system-deps: the Debian packages of the groups in SYSTEM_DEPS (tools/system-deps.txt): installed when missing
## as root with apt-get, otherwise named in one line and a stop
SYSTEM_DEPS := test ssh-shells
system-deps:
	@tools/system-deps.sh $(SYSTEM_DEPS)

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

## build: the agent for this machine, the SDK, the CLI and the pi integration
build: deps agent sdk cli pi

agent:
	CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$(LDFLAGS)" -o $(HOST_AGENT) ./agent-go/cmd/outpost

sdk: deps
	npm run --silent build -w @outpost/sdk

## cli: the `outpost` command for people (cli/bin/outpost.mjs runs cli/dist)
cli: sdk
	npm run --silent build -w @outpost/cli

## pi: @outpost/pi-coding-agent (integrations/pi-coding-agent/dist)
pi: sdk
	npm run --silent build -w @outpost/pi-coding-agent

## demo: Outpost's main job on the local agent (no SSH): an agent's tools run through LocalExecutionEnv; builds only
## what it runs (the agent and the SDK)
demo: deps agent sdk
	@echo "make demo: built; tools/demo.mjs runs an agent's tools through LocalExecutionEnv:" && echo && node tools/demo.mjs

## test: everything CI runs
test: setup build lint test-go fuzz-short test-ts

test-go:
	go vet ./...
	go test -race -count=1 ./...

test-ts: system-deps agent
	npx vitest run

lint: deps
	@unformatted=$$(gofmt -l agent-go); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	go vet ./...
	GOOS=windows go vet ./agent-go/... ./tools/windows/...
	GOOS=darwin go vet ./agent-go/...
	npx tsc -p tsconfig.json
	npx biome check .
	go run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

fuzz-short:
	tools/fuzz.sh

## test-unprivileged: the permission cases (conformance cases marked `permissions`, the permissions property) as a
## user that file permissions apply to; as root it creates an account and runs them as it (.ci/run, after `make test`)
test-unprivileged: system-deps agent
	tools/test-unprivileged.sh

## mutation: Stryker on sdk/src and gremlins on agent-go/internal, the files changed against main (ALL=1: all of
## them; TS_FILES=/GO_PKGS= name them); prints both scores and the surviving mutants (not in `make test`: slow)
mutation: deps agent
	tools/mutation/run.sh

## mutation-save: keep Stryker's results so far in the repository (tools/mutation/stryker-results.json.gz), so the
## next `make mutation` on a fresh clone reuses them; `make mutation-summary` prints them
mutation-save:
	gzip -9 -n -c .cache/mutation/stryker-incremental.json >tools/mutation/stryker-results.json.gz

mutation-summary:
	tools/mutation/seed.sh
	node --import tsx tools/mutation/summary.ts .cache/mutation stryker-saved

## fuzz: a long fuzzing run of the frame decoder and request dispatch
fuzz:
	FUZZTIME=$${FUZZTIME_LONG:-60s} tools/fuzz.sh

## dist: static, reproducible agents for every platform plus a SHA-256 manifest
dist: deps
	VERSION=$(VERSION) LDFLAGS="$(LDFLAGS)" tools/dist.sh

## test-package: packs @outpost/sdk with every platform's agent, installs it into an empty directory and runs
## LocalExecutionEnv from there with no Go on PATH (.ci/run runs it after `make test`)
test-package: dist cli pi
	tools/package-test.sh

## bench: the interleaved table of tools/bench.ts (every env and its anchors, over a loopback sshd too, then the
## listFiles and watching rows); also writes it as JSON to BENCH_JSON (default bench-results.json) for
## `node --import tsx tools/bench.ts --compare before.json after.json`; BENCH_ARGS adds flags (e.g. "--pin 1")
bench: build
	node --import tsx tools/bench.ts --json $${BENCH_JSON:-bench-results.json} $(BENCH_ARGS)

## test-windows: the conformance suite's Windows flavour, reference vs Windows agent, both under Wine (installs Wine);
## then connectSsh deploying to and driving a Windows agent under Wine (tools/windows/test-ssh-windows.sh), run
## whatever the first part gave
test-windows: deps sdk
	@status=0; tools/windows/test-windows.sh || status=$$?; tools/windows/test-ssh-windows.sh || status=$$?; exit $$status

## bench-large: the listFiles bench on a tree of 1,000,000 files (several minutes, ~1M inodes in $$TMPDIR)
bench-large: build
	BENCH_FILES=1000000 node --import tsx tools/bench.ts --only list-files

## properties-nightly: the differential property tests at 50x the CI budget; SHARD=i/N runs shard i of N
## (its own part of every budget, its own seed from OUTPOST_PROP_SEED and i); OUTPOST_PROP_REPORT=<file> records
## the totals as JSON lines for `make nightly-summary REPORTS="<files>"`
properties-nightly: agent
	NUM_RUNS_SCALE=$${NUM_RUNS_SCALE:-50} OUTPOST_PROP_SHARD=$(SHARD) npx vitest run properties

## nightly-summary: merges the shards' reports; fails unless every shard of every property passed
nightly-summary: deps
	node --import tsx tools/nightly-summary.ts $(REPORTS)

## test-wan: the tests over a real network path (root): tools/wan/rig.sh joins two network namespaces by a user-space
## delay line (lan, wan, far, lossy profiles), Debian's sshd in one, the tests in the other; then the rig's cleanup
## check. Needs iproute2, iptables, iputils-ping, openssh-server, openssh-client (docs/wan.md). WAN_TESTS picks test
## files, e.g. WAN_TESTS=tools/wan/test/watch-cut.test.ts
test-wan: agent
	tools/wan/test-wan.sh $(WAN_TESTS)

## bench-wan: the WAN rows (root, in the rig): per profile, small operations in ms and round trips, connect cold and
## warm against `ssh host true`, 64 MiB up and down against scp and sftp, listFiles/searchFiles of a 100k-file tree
## against ssh host fd/find/rg (tools/wan/bench.ts; BENCH_WAN_ARGS adds flags, e.g. "--profiles wan,far --rounds 3",
## "--sections bulk,tree"); ~15 minutes
bench-wan: agent
	tools/wan/rig.sh node --import tsx tools/wan/bench.ts $(BENCH_WAN_ARGS)

clean:
	rm -rf sdk/dist sdk/bin

## test-containers: connectContainer against real Podman (podman, runc, busybox-static; storage under .cache/podman):
## the fixture, the engine argv (kubectl: checked, not run), the end-to-end cases, the conformance suite and the
## property files on a container target (OUTPOST_CONTAINERS=1 selects them; `make test` leaves them out); then,
## pass or fail, tools/podman-leftovers.ts removes and fails on anything the fixtures left (containers, processes,
## mounts, directories under .cache/podman), after printing the report of any podman rm that had to be stopped
test-containers: agent cli
	@tools/system-deps.sh containers
	@status=0; OUTPOST_CONTAINERS=1 npx vitest run sdk/test/podman-fixture.test.ts sdk/test/container-engine.test.ts \
		sdk/test/container.e2e.test.ts spec/test/conformance-container.test.ts cli/test/cli-container.e2e.test.ts \
		$$(grep -l 'propertyFixture()' properties/*.test.ts) || status=$$?; \
	node --import tsx tools/podman-leftovers.ts .cache/podman || status=1; exit $$status
