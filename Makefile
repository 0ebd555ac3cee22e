# The two commands of the README, and a few helpers. Each target installs
# missing Debian packages first (scripts/install-deps.sh), then builds.
JOBS ?= $(shell nproc)
RELEASE := build/release
SANITIZE := build/sanitize

.PHONY: demo test test-sanitize build package bench fuzz fuzz-ci deps clean

deps:
	@scripts/install-deps.sh

$(RELEASE)/build.ninja: | deps
	cmake --preset release >/dev/null

build: deps $(RELEASE)/build.ninja
	cmake --build $(RELEASE) -j $(JOBS)

# The main job: a local demo (see README "What make demo runs").
demo: build
	@scripts/demo.sh $(RELEASE)

# The whole test suite through ctest (it ends with ctest's summary line).
test: build
	ctest --test-dir $(RELEASE) --output-on-failure -j $(JOBS)

# The same suite under AddressSanitizer and UndefinedBehaviorSanitizer,
# except the end-to-end fault suite (label e2e; the preset does not build
# it): it runs the very programs the rest of this suite already runs
# sanitized, and would add its own minutes, which are real time (5.8 in the
# release build's run of 2026-12-03), to a run that must stay short. So is
# the detection sweep (label sweep): 96 meshsim runs of the code the
# built-in scenarios already run sanitized.
test-sanitize: deps
	cmake --preset sanitize >/dev/null
	cmake --build $(SANITIZE) -j $(JOBS)
	ctest --test-dir $(SANITIZE) --output-on-failure -j $(JOBS) -LE 'e2e|sweep'

# The Debian package (docs/OPERATING.md, "Install"): build/release/package/meshnode_VERSION_ARCH.deb.
package: build
	cd $(RELEASE) && cpack

bench: build
	@scripts/install-deps.sh bench
	@scripts/bench.sh $(RELEASE)

# Coverage-guided fuzzing (tests/fuzz/README.md): every target FUZZ_SECONDS
# (default 180) in turn, clang + ASan + UBSan, at nice 19; exits non-zero on
# any finding. fuzz-ci: 30 s each from the committed corpus, one target per
# core at once, for .ci/run.
FUZZ_SECONDS ?= 180
fuzz:
	@scripts/install-deps.sh fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

fuzz-ci:
	@scripts/install-deps.sh fuzz
	FUZZ_SECONDS=30 scripts/fuzz.sh --ci

clean:
	rm -rf build
