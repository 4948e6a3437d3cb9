# deevnet.net: one entry point for building, testing and demonstrating the collection.
SHELL := /bin/bash
.DEFAULT_GOAL := help
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

include mk/python.mk
include mk/collection.mk
include mk/robustness.mk
include mk/docs.mk
include tests/lab/lab.mk

.PHONY: help test host-deps rust-test lint ansible-test sanity changelog-lint
help:
	@echo "make test        everything CI runs: Rust tests and lints, the collection built and used by Ansible, sanity, the lab, both molecule scenarios"
	@echo "make demo        boot the lab node and show both faults fixed by the collection"
	@echo "make collection  build dist/deevnet-net-<version>.tar.gz"
	@echo "make docs        build the collection's docsite (build/docs/html); make docs-test checks it"
	@echo "make lab-up | lab-ssh | lab-down | lab-test"

# The order runs the fast, local checks first, so a broken build fails in minutes.
test: host-deps lint rust-test collection notices-check ansible-test ansible-core-oldest sanity galaxy-import changelog-lint ansible-lint docs-test lab-test molecule molecule-fabric molecule-all-exit molecule-qinq
	@echo "== make test: all passed"

# Host tools the tests use: vtysh (frr_local_stanza's `validate` checked against real FRR),
# unshare/ip (namespaces), nft (qinq_check reads bridge-family rules in test namespaces) and
# chromium (the fabric proof's HTML report opened headless). FRR's daemons are kept from
# starting: only vtysh -C is used.
host-deps:
	@missing=; command -v vtysh >/dev/null || missing="$$missing frr"; \
	  command -v unshare >/dev/null || missing="$$missing util-linux"; \
	  [ -x /usr/sbin/nft ] || missing="$$missing nftables"; \
	  command -v chromium >/dev/null || missing="$$missing chromium"; \
	  if [ -n "$$missing" ]; then echo "== installing:$$missing"; \
	    planted=; [ -e /usr/sbin/policy-rc.d ] || { printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; planted=1; }; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; rc=$$?; \
	    [ -z "$$planted" ] || rm -f /usr/sbin/policy-rc.d; exit $$rc; fi

# cargo doc with -D warnings: each crate's own documentation (its lib.rs or main.rs `//!`), where
# a broken or private intra-doc link fails the lint. cargo-machete fails on a dependency that no
# crate's code uses (installed from crates.io when missing).
CARGO_MACHETE_VERSION := 0.9.2
lint:
	cargo fmt --all -- --check
	@cargo machete --version 2>/dev/null | grep -qx '$(CARGO_MACHETE_VERSION)' || \
	  { echo "== installing cargo-machete $(CARGO_MACHETE_VERSION)"; cargo install cargo-machete --locked --version $(CARGO_MACHETE_VERSION); }
	cargo machete
	cargo clippy --workspace --all-targets --locked -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

# Needs root: the module tests create network namespaces.
rust-test:
	cargo test --workspace --locked

# The release binaries lock under /run/lock/deevnet.net: pytest runs in a private mount
# namespace with a tmpfs of its own on /run/lock, so the host's /run is never written (each
# pytest-xdist worker in one of its own). PYTEST_WORKERS workers (pytest-xdist's -n; 0 runs in
# one process): tests that wait (a switch's timeout, a proof's sleep) overlap with busy ones;
# tests of one xdist_group share a worker.
PYTEST_WORKERS ?= 2
PYTEST_XDIST := -n $(PYTEST_WORKERS) --dist loadgroup
ansible-test: collection
	$(PY) -m pytest -q $(PYTEST_XDIST) tests/ansible

# The collection on the oldest ansible-core it claims: ad hoc, playbooks with check and diff, the
# fast path and its fallbacks, the roles' interfaces and their filters. (ansible-test covers the newest, 2.21.)
.PHONY: ansible-core-oldest
ansible-core-oldest: collection $(VENV_OLDEST)/.installed
	$(VENV_OLDEST)/bin/python -m pytest -q $(PYTEST_XDIST) tests/ansible/test_fast_path.py tests/ansible/test_sysctl_forwarding.py \
	  tests/ansible/test_frr_local_stanza.py tests/ansible/test_vrf_route_assert.py tests/ansible/test_role_interface.py \
	  tests/ansible/test_node_plan.py tests/ansible/test_egress_probe.py tests/ansible/test_warnings.py tests/ansible/test_qinq_uplink_role.py \
	  tests/ansible/test_transit_router_role.py

# ansible-test sanity on the extracted tarball, every test, nothing hidden (tests/sanity/run).
sanity: collection venv
	tests/sanity/run

# galaxy-importer on the tarball: 0 errors and 0 warnings, or it fails. Its own ansible-test step
# needs Docker and a registry's test image, so `make sanity` stands in for it (tests/galaxy/import
# says how). About a minute.
.PHONY: galaxy-import
galaxy-import: collection venv
	tests/galaxy/import

# The changelog is generated from the fragments when the collection is staged; lint the sources.
changelog-lint: venv
	cd $(ROOT)/collection && $(VENV)/bin/antsibull-changelog lint

.PHONY: demo
# One command on a fresh machine: venv, collection, lab, both faults, the fix, the proof.
demo: venv
	demo/run

.PHONY: bench
# Side-by-side ratios against what users run today; rewrites BENCHMARKS.md. Not part of make test.
bench: collection
	$(PY) bench/run.py
