# kinformer: two commands for a newcomer — `make run` (demo, no cluster) and `make test`.
# Everything `make test` needs is built or installed here, idempotently, with a cache
# outside the checkout (~/.cache/kinformer) so a fresh clone reuses it.

GO        ?= go
BIN_DIR   ?= $(HOME)/.cache/kinformer/bin
# Fuzz budgets are counts of executions, not durations: Go 1.26's fuzz coordinator can fail
# a duration-bounded run with a bare "context deadline exceeded" at the deadline
# (golang/go#75804, fixed in 1.27). A count has no deadline to race and only runs longer on
# a slower machine. FUZZTIME=30s (or 5m) overrides every budget for a longer local hunt.
FUZZTIME  ?=
export KINFORMER_BIN_DIR := $(BIN_DIR)
export PATH := $(PATH):$(BIN_DIR)

# Fuzz targets as package:Target:executions, each about six seconds on the 2-core CI machine.
FUZZ_TARGETS := \
	./internal/jsonscan:FuzzValid:100000 \
	./internal/jsonscan:FuzzScanner:400000 \
	./internal/codec:FuzzPack:75000 \
	./internal/codec:FuzzProtobufDecodeAgainstLastState:60000 \
	./listwatch:FuzzWatchDecoder:50000 \
	./listwatch:FuzzWatchSplits:10000 \
	./listwatch:FuzzListDecoder:17000 \
	./listwatch:FuzzKubeconfig:14000 \
	./object:FuzzParseSelector:90000 \
	./object:FuzzDecodeRoundTrip:40000 \
	./object:FuzzDecodeMatchesEncodingJSON:70000 \
	./object:FuzzDecodeProtobufPod:80000 \
	./object:FuzzDecodeProtobufLease:90000 \
	./internal/protowire:FuzzNext:300000 \
	./internal/kubeproto:FuzzParseEnvelope:60000 \
	./internal/kubeproto:FuzzParseList:60000 \
	./internal/kubeproto:FuzzParseWatchEvent:80000 \
	./internal/kubeproto:FuzzDecodeStatus:50000 \
	./internal/kubeproto:FuzzFrameReader:60000 \
	./deltafifo:FuzzFIFOModel:65000 \
	./indexer:FuzzIndexerModel:5000 \
	./shard:FuzzParse:200000 \
	./shard:FuzzParseSet:150000

.PHONY: run test check-fmt vet unit fuzz e2e chaos cluster-bin cluster bench bench-full bench-publish bench-rewrite bench-micro bench-compare bench-shards protobuf-golden lint

run:
	$(GO) run ./cmd/kinformer demo

test: check-fmt vet lint unit fuzz e2e

check-fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# The separate modules (client-go comparisons) are vetted too; they only build here.
vet:
	$(GO) vet ./...
	cd bench/clientgo && $(GO) vet ./...

unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e /e2e -e /chaos)

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$${rest#*:}x; \
		if [ -n "$(FUZZTIME)" ]; then budget=$(FUZZTIME); fi; \
		echo "fuzz $$name ($$budget)"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $$budget $$pkg || exit 1; \
	done

# End-to-end tests against a real etcd + kube-apiserver started on loopback, and a short
# chaos run (at least 50 faults; `make chaos` runs the long one) on a control plane of its own.
e2e: cluster-bin
	KINFORMER_E2E=1 $(GO) test -race -count=1 ./e2e/
	KINFORMER_E2E=1 $(GO) test -count=1 -v -timeout 15m ./chaos/ -args -chaos.faults=50

# The long chaos run: at least 500 faults within 15 minutes, and the recovery comparison
# with client-go; prints the report and keeps it in chaos/report-latest.txt.
CHAOS_FAULTS ?= 520
chaos: cluster-bin
	@rm -f chaos/report-latest.txt
	KINFORMER_E2E=1 $(GO) test -count=1 -v -timeout 30m ./chaos/ -args -chaos.faults=$(CHAOS_FAULTS) \
		-chaos.duration=14m -chaos.quiet-every=20 -chaos.restart-every=100 -chaos.recovery-rounds=10 \
		-chaos.report=$(CURDIR)/chaos/report-latest.txt

cluster-bin:
	@hack/cluster/build.sh >/dev/null

cluster: cluster-bin
	$(GO) run ./hack/cluster/run

# The benchmarks; `go doc ./bench` is their map (every program, what it measures, how to
# run one piece by hand). The end-to-end list/watch benchmark, kinformer and client-go as
# separate processes against the stream server: bench/results/latest.md and its charts.
# `bench` is the short plan (a few minutes); `bench-full` adds 100k pods, 1 MB secrets
# and the real apiserver.
# BEFORE=<commit> runs that commit's kinformer-runner beside the checkout's, and the
# report lists the figures that got worse ("nothing slower than before").
# Both write to BENCH_OUT, an ignored folder beside the published results, so that your
# run leaves the clone clean; `make bench-publish` is the full plan written over the
# published bench/results/ (what the README quotes), an explicit step.
BEFORE ?=
BENCH_OUT ?= bench/results/local
bench:
	$(GO) run ./bench/cmd/benchharness -plan short -out $(BENCH_OUT) $(if $(BEFORE),-before $(BEFORE))

bench-full: cluster-bin
	$(GO) run ./bench/cmd/benchharness -plan full -out $(BENCH_OUT) $(if $(BEFORE),-before $(BEFORE))

bench-publish:
	$(MAKE) bench-full BENCH_OUT=bench/results

# latest.md made again from the results.json a run left in BENCH_OUT, quoting
# bench/results/analysis.md as it is now: the analysis is written after the run it reads.
bench-rewrite:
	$(GO) run ./bench/cmd/benchharness -rewrite -out $(BENCH_OUT)

# Objects listed per change of a shard group's membership, against objects moved:
# $(BENCH_OUT)/sharded.md (bench/results/sharded.md is the published one).
bench-shards:
	mkdir -p $(BENCH_OUT)
	$(GO) run ./bench/cmd/shardbench -out $(BENCH_OUT)/sharded.md

# In-process Go benchmarks of each package (decode, FIFO, queue, ...).
bench-micro:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# kinformer and client-go through the same harness, in one process: compare within a run.
bench-compare:
	cd bench/clientgo && $(GO) test -run '^$$' -bench . -benchmem -count 6 . | tee /tmp/kinformer-bench-compare.txt

# The protobuf decoder's golden data, written by k8s.io/apimachinery: object/testdata/protobuf.
protobuf-golden:
	cd bench/clientgo && $(GO) run ./cmd/pbgolden -out ../../object/testdata/protobuf

# staticcheck from the Go module proxy (not a dependency of the engine).
lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
