# ksched: the two set-up commands are `make demo` and `make test` (see README.md).
SHELL := /bin/bash
BUILD ?= build
BUILD_SAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
BUILD_TSAN ?= build-tsan
BUILD_RELEASE ?= build-release
# The thread-heavy modules' unit tests, run under ThreadSanitizer by `make test`: the
# queue, cache, API client, informers, scheduler, leader election, framework runtime
# (parallelizer, waiting pods), util (worker pool, clock), metrics and the secure server
# (its epoll thread, handler pools and answer queue).
TSAN_TARGETS ?= queue_test cache_test client_unit_test informers_unit_test scheduler_test event_queue_test leaderelection_test framework_runtime_test util_test metrics_test decision_log_test volumebinding_test server_test simulate_test dynamicresources_test
FUZZ_SECONDS ?= 60
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# ccache hits across clones (CI builds a fresh clone each time): paths relative to here.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: all deps control-plane image e2e-deploy build install build-asan build-tsan build-release test test-unit fuzz demo bench bench-client bench-decode bench-queue bench-algorithm bench-simulate bench-e2e bench-chaos clean

all: build

deps:
	bash scripts/install-deps.sh

# Every Kubernetes binary the tests run, in one Go invocation: kube-apiserver,
# kube-scheduler and kube-controller-manager, and in CI kubelet and kubectl too (for
# scripts/e2e-deploy.sh), so a clean machine pays for one Go build, not two.
control-plane: deps
	KSCHED_K8S_EXTRA="$(if $(filter true,$(CI)),kubelet kubectl,)" bash scripts/control-plane.sh build >/dev/null

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

# The ksched binary, and the SDK for plugins built outside this tree: the headers, the
# libraries and find_package(ksched) (cmake/KschedInstall.cmake; examples/score-plugin).
# PREFIX=/opt/ksched and DESTDIR=/tmp/stage as usual.
PREFIX ?= /usr/local
install: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS) --target ksched
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

# Unit tests (and the API client's integration test) under AddressSanitizer +
# UndefinedBehaviorSanitizer, built with clang so -Wthread-safety checks the GUARDED_BY
# annotations too.
build-asan: deps
	cmake -S . -B $(BUILD_SAN) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_BUILD_TYPE=Debug -DKSCHED_SANITIZE=address,undefined -DKSCHED_UNIT_TESTS_ONLY=ON
	cmake --build $(BUILD_SAN) -j$(JOBS)

build-tsan: deps
	cmake -S . -B $(BUILD_TSAN) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSCHED_SANITIZE=thread -DKSCHED_UNIT_TESTS_ONLY=ON
	cmake --build $(BUILD_TSAN) -j$(JOBS) --target $(TSAN_TARGETS)

# The binary as users and the Dockerfile build it (-O3), with warnings as errors: GCC's
# -O3 inlining reports warnings (-Wrestrict, -Warray-bounds) that -O2 does not.
build-release: deps
	cmake -S . -B $(BUILD_RELEASE) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_RELEASE) -j$(JOBS) --target ksched

# Everything: unit + integration tests (real etcd + kube-apiserver), the unit tests again
# under ASan/UBSan, and the thread-heavy ones under TSan. Prints "N passed, N failed".
test: control-plane build build-release build-asan build-tsan
	KSCHED_PREBUILT=$(abspath $(BUILD_RELEASE))/cmd/ksched/ksched bash scripts/run-tests.sh $(BUILD) $(BUILD_SAN) $(BUILD_TSAN)

test-unit: build
	cd $(BUILD) && ctest -L unit --output-on-failure -j$(JOBS)

# The libFuzzer targets (tests/fuzz), built with clang under ASan + UBSan in
# $(BUILD_FUZZ), each run for FUZZ_SECONDS from a copy of its seeds
# (tests/data/fuzz/<target>/). FUZZ_TARGETS="fuzz_quantity fuzz_lease" runs only those.
# Prints "fuzz <target>: <runs> runs, 0 crashes" per target; fails with the crashing input.
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) BUILD=$(BUILD_FUZZ) JOBS=$(JOBS) bash scripts/fuzz.sh

# The demo runs only $(BUILD)/cmd/ksched/ksched (scripts/demo.sh), so it builds just that
# target and its libraries, not every test and benchmark (`make build` does those).
# It needs kube-apiserver alone, so only that is built (the tests build the rest). A
# line per stage says what it does and, once done, how long it took.
demo: deps
	@t=$$SECONDS; echo "demo: [1/3] kube-apiserver 1.20.2 (the first run builds it from Debian's source package: about 7 min on 2 cores; cached after)"; \
	  KSCHED_K8S_BINARIES=kube-apiserver bash scripts/control-plane.sh build >/dev/null && \
	  echo "demo: [1/3] kube-apiserver ready ($$((SECONDS - t)) s)"
	@t=$$SECONDS; echo "demo: [2/3] ksched (the first build compiles the scheduler alone: about 10 min on 2 cores; ccache after)"; \
	  { [ -f $(BUILD)/CMakeCache.txt ] || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null; } && \
	  { cmake --build $(BUILD) -j$(JOBS) --target ksched > $(BUILD)/demo-build.log 2>&1 || \
	    { tail -40 $(BUILD)/demo-build.log; echo "demo: building ksched failed (log: $(BUILD)/demo-build.log)"; exit 1; }; } && \
	  echo "demo: [2/3] ksched built ($$((SECONDS - t)) s)"
	@echo "demo: [3/3] control plane, ksched, sample nodes and pods"
	bash scripts/demo.sh $(BUILD)

# The container image without a registry or Docker engine (scripts/build-image.sh):
# debootstrap'd debian:bookworm / bookworm-slim bases, the Dockerfile built with buildah,
# the runtime stage's libraries checked against the binary's, loaded into containerd.
# IMAGE=name:tag overrides ksched:latest.
image:
	bash scripts/build-image.sh $(or $(IMAGE),ksched:latest)

# ksched deployed as a pod with `kubectl apply -f manifests/` on a one-node cluster of this
# machine (scripts/e2e-deploy.sh: everything inside a network namespace it creates;
# kubelet + containerd, kube-controller-manager, kube-scheduler 1.20.2), leader failover
# included; torn down at the end (KEEP=1 leaves it up). Root only.
e2e-deploy: deps
	bash scripts/e2e-deploy.sh

bench: bench-client bench-decode bench-queue bench-algorithm

bench-client: control-plane build
	bash scripts/bench-client.sh $(BUILD)

# WORKLOAD=basic|anti-affinity|spread|preferred-affinity|replicaset|preemption|gang|all (default
# basic); NODES, PODS, QPS, UPSTREAM=0 (ksched only), KSCHED=0 (kube-scheduler only),
# LIMIT=1 (also the no-op binder: the API server's limit, and ksched's fraction of it), LIMIT=2
# (and that binder again with a pod watch like a scheduler's)
# override. Fails if a ksched run times out, has violations, or evicts other than expected.
bench-e2e: control-plane build
	bash scripts/bench-e2e.sh $(BUILD)

# Two ksched replicas on 200 one-CPU nodes exactly filled by 2,000 pods while the apiserver
# is SIGKILLed twice (etcd compacted between), 200 pods churn and the leader is SIGKILLed;
# fails on an unbound pod, an overcommitted node or a pod bound twice (audit log).
# NODES, CHURN, SEED, FAULTS=apiserver,compact,churn,leader override.
bench-chaos: control-plane build
	bash scripts/bench-chaos.sh $(BUILD)

# `ksched simulate --capacity-of` on a 5,000-node, 50,000-pod cluster file; BENCH_ARGS="--nodes N
# --pods-per-node N --runs N".
bench-simulate: build
	$(BUILD)/bench/simulate/bench_simulate --ksched $(BUILD)/cmd/ksched/ksched $(BENCH_ARGS)

bench-decode: build
	$(BUILD)/bench/api/bench_decode

bench-queue: build
	$(BUILD)/bench/queue/bench_queue

# The scheduling cycle in process (no API server), 5,000 nodes; BENCH_ARGS="--pods N --runs N".
bench-algorithm: build
	$(BUILD)/bench/algorithm/bench_algorithm $(BENCH_ARGS)

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_FUZZ) $(BUILD_TSAN)
