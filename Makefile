# Orrery top-level Makefile: the two commands of the README, and a few conveniences.
#   make run    set up, build, predict the built-in example
#   make test   set up, build (plain and ASan+UBSan), run every test
BUILD      ?= build
BUILD_SAN  ?= build-san
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 30
EXAMPLE    ?= examples/gpt3_175b_1024_a100.yaml
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all setup build build-san build-fuzz run test test-plain test-san test-fuzz fuzz bench mutate clean

all: build

setup:
	@sh scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

$(BUILD_SAN)/build.ninja:
	cmake -S . -B $(BUILD_SAN) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DORRERY_SANITIZE=ON

$(BUILD_FUZZ)/build.ninja:
	CC=clang cmake -S . -B $(BUILD_FUZZ) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DORRERY_FUZZ=ON

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-san: setup $(BUILD_SAN)/build.ninja
	cmake --build $(BUILD_SAN) -j $(JOBS)

build-fuzz: setup $(BUILD_FUZZ)/build.ninja
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_targets

run: build
	./$(BUILD)/orrery predict $(EXAMPLE)

test-plain: build
	sh scripts/setup-torch.sh $(BUILD)/torch-venv
	sh scripts/setup-python.sh $(BUILD)/py-venv
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-san: build-san
	cd $(BUILD_SAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	    ctest --output-on-failure -j $(JOBS) -LE slow

# every parser's libFuzzer harness (fuzz/) for FUZZ_SECONDS each under ASan+UBSan, JOBS at once; fails on a finding
test-fuzz: build-fuzz
	sh scripts/fuzz.sh $(BUILD_FUZZ) $(FUZZ_SECONDS) $(JOBS)

test: test-plain test-san test-fuzz

# longer fuzzing: make fuzz FUZZ_SECONDS=600
fuzz: test-fuzz

bench: build
	./$(BUILD)/orrery-bench
	./$(BUILD)/orrery-bench search

# Mutation testing (scripts/mutate.sh, docs/mutate.md): minutes per mutant; not part of make test.
mutate: setup
	sh scripts/mutate.sh

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_FUZZ)
