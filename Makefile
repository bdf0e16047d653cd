# Quick start: `make demo` and `make test` (see README.md). Both install missing Debian
# packages first (scripts/install-deps.sh), then configure and build into build/.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: deps configure build demo test bench clean

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/meshplan plan --model models/llama3-70b.yaml --cluster topologies/dgx-h100-64n.yaml --top 10

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD)/meshplan bench

clean:
	rm -rf $(BUILD)
