# Quick start: `make demo` and `make test` (see README.md). Both install missing Debian
# packages first (scripts/install-deps.sh), then configure and build into build/.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: deps configure build demo test test-sanitize bench fuzz clean

deps:
	@scripts/install-deps.sh

# `make demo` and `make bench` build meshplan with link-time optimization (MESHPLAN_LTO, 6-7%
# fewer instructions in a search; twice the compile time); `make test` keeps what build/ was
# configured with (off in a fresh folder), so CI's build takes the time it always took.
demo bench: CMAKE_LTO = -DMESHPLAN_LTO=ON

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_LTO) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/meshplan plan --model models/llama3-70b.yaml --cluster topologies/dgx-h100-64n.yaml --top 10

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Every test under AddressSanitizer + UndefinedBehaviorSanitizer (g++), in its own build folder;
# any report fails the test that triggered it. No CUDA backend (the sanitizers and nvcc do not mix)
# and no MPI module (Open MPI's own allocations would read as leaks).
SANITIZE_BUILD ?= build-sanitize
test-sanitize: deps
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=Debug -DMESHPLAN_SANITIZE=ON \
	  -DMESHPLAN_WITH_CUDA=OFF -DMESHPLAN_WITH_MPI=OFF >/dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	cd $(SANITIZE_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD)/meshplan bench

# libFuzzer targets (fuzz/) under ASan+UBSan, each run FUZZ_SECONDS from the shipped files as
# seeds; fails on any crash, hang or leak. Needs clang (FUZZ_CXX) with its fuzzer runtime.
FUZZ_BUILD ?= build-fuzz
FUZZ_CXX ?= clang++-14
FUZZ_SECONDS ?= 60
fuzz:
	@scripts/install-deps.sh fuzz
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) \
	  -DMESHPLAN_FUZZ=ON -DMESHPLAN_WITH_CUDA=OFF -DMESHPLAN_WITH_MPI=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers
	@scripts/run-fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD)
