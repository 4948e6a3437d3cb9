# Robustness (issue 9): fuzzing and the fault tests. See TESTING.md.
#
#   make fuzz-smoke   seconds: each fuzz target's corpus, kept regressions and a bounded number of
#                     generated inputs, on stable Rust, through the same invariant code as the
#                     fuzzer (also part of `cargo test --workspace`)
#   make robustness   the smoke run plus the crash, concurrency, fault, file-safety and security tests (root)
#   make fuzz         cargo fuzz (libFuzzer) on every target for FUZZ_SECONDS each; not in `make test`
#   make soak         SOAK_TRIALS (10,000) kill -9 trials on each file module; not in `make test`
#
# Each crate has one integration-test binary, `it` (tests/it/main.rs); the former test files are
# its modules, so a test-name filter picks them: `robustness` matches every robustness_*:: module.
# Targets are the files in fuzz/fuzz_targets/: a new one is picked up by `make fuzz` as it is.
FUZZ_TARGETS := $(patsubst $(ROOT)/fuzz/fuzz_targets/%.rs,%,$(wildcard $(ROOT)/fuzz/fuzz_targets/*.rs))
FUZZ_SECONDS ?= 45
# `none` keeps the build short; `address` adds ASan (the code under test is safe Rust).
FUZZ_SANITIZER ?= none
ROBUSTNESS_CRATES := -p deevnet_runtime -p frr_local_stanza -p sysctl_forwarding -p egress_probe

.PHONY: fuzz fuzz-smoke robustness cargo-fuzz
fuzz-smoke:
	cargo test --locked $(ROBUSTNESS_CRATES) --test it robustness_fuzz_smoke::

robustness:
	cargo test --locked $(ROBUSTNESS_CRATES) --test it robustness

cargo-fuzz:
	@command -v cargo-fuzz >/dev/null 2>&1 || { echo "== installing cargo-fuzz from crates.io"; cargo install cargo-fuzz --locked; }

# The stable toolchain runs cargo fuzz with RUSTC_BOOTSTRAP=1 (its -Z flags). New inputs go to
# fuzz/work/TARGET (ignored by git); fuzz/corpus/TARGET is read only. A crash stops the run and
# is left in fuzz/artifacts/TARGET: copy it to fuzz/regressions/TARGET/ so the smoke run keeps it.
fuzz: cargo-fuzz
	cd $(ROOT)/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz build --sanitizer $(FUZZ_SANITIZER)
	@set -e; cd $(ROOT)/fuzz; for t in $(FUZZ_TARGETS); do \
	  mkdir -p work/$$t regressions/$$t; \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer $(FUZZ_SANITIZER) $$t work/$$t corpus/$$t regressions/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -timeout=10 -print_final_stats=1 2>&1 | grep -v '^#[0-9]' ; \
	  test $${PIPESTATUS[0]} -eq 0 || { echo "== fuzz $$t found a failure: see fuzz/artifacts/$$t"; exit 1; }; \
	done
	@echo "== fuzz: $(words $(FUZZ_TARGETS)) targets, $(FUZZ_SECONDS) s each, no failure"

# The soak (opt-in, not in `make test`): SOAK_TRIALS kill -9 trials on each file module, at
# random points (half of them inside the widened window before the rename; the binaries are
# the tests' builds, with the runtime's `test-hooks` feature). Each prints one line with the
# count of partial or lost files, which must be 0; SOAK_SEED replays a run.
SOAK_TRIALS ?= 10000
.PHONY: soak
soak:
	cargo build --locked -p frr_local_stanza -p sysctl_forwarding --tests
	@set -e; for crate in sysctl_forwarding frr_local_stanza; do \
	  SOAK_TRIALS=$(SOAK_TRIALS) cargo test --locked -q -p $$crate --test it -- \
	    --ignored --exact robustness_crash::soak_kill_9 --nocapture 2>&1 | grep -E '^== soak|panicked|FAILED|assert' ; \
	  test $${PIPESTATUS[0]} -eq 0 || { echo "== soak $$crate: FAILED"; exit 1; }; \
	done
