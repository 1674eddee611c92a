# gtrace: the two set-up commands of the README and a few more.
#   make demo   install missing packages, configure, build, open the live demo
#   make test   the same set-up, then every test suite (normal and ASan+UBSan)
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
MESON_OPTS ?=
FUZZ_SECONDS ?= 10
# tests run at once: most wait on a terminal, a child or a clock, not the CPU
TEST_JOBS ?= 4

.PHONY: all deps build asan demo test test-fast fuzz fuzz-smoke bench bench-peers clean

all: build

deps:
	@bash .ci/deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug $(MESON_OPTS)

$(FUZZ_BUILD)/build.ninja:
	CC=clang meson setup $(FUZZ_BUILD) -Dfuzz=true -Dtests=disabled -Dbuildtype=debugoptimized $(MESON_OPTS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

asan: deps $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)

demo: build
	./$(BUILD)/tui/gtrace demo

test-fast: build
	meson test -C $(BUILD) --print-errorlogs

# a phase that fails still ends with the summary (what failed and why)
SUMMARY = bash tests/summary.sh $(BUILD)/meson-logs/testlog.txt $(ASAN_BUILD)/meson-logs/testlog.txt
test: build asan
	@rm -f $(ASAN_BUILD)/meson-logs/testlog.txt
	meson test -C $(BUILD) --print-errorlogs --num-processes $(TEST_JOBS) || { $(SUMMARY); exit 1; }
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C $(ASAN_BUILD) --print-errorlogs --num-processes $(TEST_JOBS) --timeout-multiplier 3 || { $(SUMMARY); exit 1; }
	$(MAKE) fuzz-smoke FUZZ_SECONDS=$(FUZZ_SECONDS)
	@$(SUMMARY)

fuzz-smoke: deps $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD)
	@bash fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

fuzz:
	$(MAKE) fuzz-smoke FUZZ_SECONDS=600

bench: build
	bash bench/run.sh $(BUILD)

# gtrace and Holistic Trace Analysis (../shared/peers) on the same files; ratios into docs/benchmarks.md
PEERS_OPTS ?=
bench-peers: build
	bash bench/peers.sh $(BUILD) --docs $(PEERS_OPTS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
