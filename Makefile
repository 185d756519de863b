# Two commands do everything on a fresh Debian 12 machine (as root):
#   make run    install what is needed, build, and run the main job
#   make test   install what is needed, build, and run every test
# Also: make deb, make image, make bench, make fuzz, make format, make tidy,
# make clean.

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 20
CMAKE_FLAGS ?=

.PHONY: all deps build run test test-asan deb image bench fuzz format tidy clean

all: build

deps:
	@./scripts/install-deps.sh

# RelWithDebInfo (CMakeLists.txt's default) at -g1: line tables and function
# names, what a backtrace or a profile shows, without the variables' debug
# information, which cost 30 % of each file's compile time (analysis/report.cc
# measured side by side: 3.78 s CPU at -g1, 5.37 s at -g). `make deb` strips
# the programs either way.
$(BUILD)/build.ninja: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) -G Ninja -DOFU_WERROR=ON -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O2 -g1 -DNDEBUG' $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD)

# Only what `make run` runs: the ofu program and the plugins it opens (the
# kubelet and HTTP clients, dependencies of the ofu target), not the tests,
# benchmarks or tools.
run: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) --target ofu
	@./scripts/run.sh $(BUILD)/apps/ofu/ofu

# The test suite twice: a normal build, then everything under
# AddressSanitizer + UndefinedBehaviorSanitizer. CTest runs as many tests at
# once as there are cores (TEST_JOBS): most of them wait on processes they
# start, and NoLeftoverProcesses, a fixture cleanup, still runs after all.
TEST_JOBS ?= $(shell nproc)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS)
	@$(MAKE) --no-print-directory test-asan

# Tests labelled static (no C++ of ours runs) or packaging are left out here:
# tests/hygiene.cmake says why. Debug at -g1: line tables and function names, all that the sanitizers'
# reports print (function, file and line), without the variables' debug
# information, which cost a fifth of each file's compile time (a test file
# measured side by side: 15.0 s CPU at -g, 12.3 s at -g1).
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DOFU_WERROR=ON -DOFU_SANITIZE=ON -DOFU_BENCH=OFF \
	  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(TEST_JOBS) --label-exclude 'static|packaging'

# The Debian package, $(BUILD)/ofu_<version>_amd64.deb (deploy/debian/,
# docs/deploy.md): what it installs, and nothing the tests need.
deb: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) --target ofu ofu_man_pages ofu_deb_changelog
	cd $(BUILD) && cpack -G DEB

# The container image ofu:<version> from the package, with mmdebstrap and
# podman, no registry (scripts/make_image.sh; smoke test:
# scripts/image_smoke_test.sh ofu:<version>).
image: deb
	@./scripts/install-deps.sh image
	./scripts/make_image.sh $(BUILD)

bench: build
	./bench/run.sh $(BUILD)

# A short run of every fuzz target (FUZZ_SECONDS each) from its seed corpus.
fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DOFU_WERROR=ON -DOFU_FUZZ=ON \
	  -DOFU_TESTS=OFF -DOFU_BENCH=OFF
	cmake --build $(FUZZ_BUILD)
	./fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# Lay out every C++ file with clang-format (.clang-format); CTest's
# Format.ClangFormat checks it.
format: deps
	./scripts/format.sh

# clang-tidy (.clang-tidy) over every source file; slow, not part of `make test`.
tidy: build
	./scripts/tidy.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
