# ksched: the two set-up commands are `make demo` and `make test` (see README.md).
SHELL := /bin/bash
BUILD ?= build
BUILD_SAN ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# ccache hits across clones (CI builds a fresh clone each time): paths relative to here.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: all deps control-plane build build-asan test test-unit demo bench bench-client bench-decode bench-queue bench-algorithm bench-e2e clean

all: build

deps:
	bash scripts/install-deps.sh

control-plane: deps
	bash tests/e2e/control-plane.sh build >/dev/null

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

# Unit tests (and the API client's integration test) under AddressSanitizer +
# UndefinedBehaviorSanitizer, built with clang so -Wthread-safety checks the GUARDED_BY
# annotations too.
build-asan: deps
	cmake -S . -B $(BUILD_SAN) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_BUILD_TYPE=Debug -DKSCHED_SANITIZE=address,undefined -DKSCHED_UNIT_TESTS_ONLY=ON
	cmake --build $(BUILD_SAN) -j$(JOBS)

# Everything: unit + integration tests (real etcd + kube-apiserver), then the unit tests
# again under ASan/UBSan. Prints "N passed, N failed" at the end.
test: control-plane build build-asan
	bash scripts/run-tests.sh $(BUILD) $(BUILD_SAN)

test-unit: build
	cd $(BUILD) && ctest -L unit --output-on-failure -j$(JOBS)

# The demo runs only $(BUILD)/cmd/ksched/ksched (scripts/demo.sh), so it builds just that
# target and its libraries, not every test and benchmark (`make build` does those).
demo: control-plane $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS) --target ksched
	bash scripts/demo.sh $(BUILD)

bench: bench-client bench-decode bench-queue bench-algorithm

bench-client: control-plane build
	bash scripts/bench-client.sh $(BUILD)

# WORKLOAD=basic|anti-affinity|spread|preferred-affinity|replicaset|all (default basic);
# NODES, PODS, QPS, UPSTREAM=0 override. Fails if ksched's placement has violations.
bench-e2e: control-plane build
	bash scripts/bench-e2e.sh $(BUILD)

bench-decode: build
	$(BUILD)/bench/api/bench_decode

bench-queue: build
	$(BUILD)/bench/queue/bench_queue

# The scheduling cycle in process (no API server), 5,000 nodes; BENCH_ARGS="--pods N --runs N".
bench-algorithm: build
	$(BUILD)/bench/algorithm/bench_algorithm $(BENCH_ARGS)

clean:
	rm -rf $(BUILD) $(BUILD_SAN)
