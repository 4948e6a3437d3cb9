# Building the Galaxy collection: release binaries + documentation + roles, staged as
# build/collection/ansible_collections/deevnet/net and packed into dist/.
VERSION := $(shell sed -n 's/^version: *//p' $(ROOT)/galaxy.yml)
STAGE := $(ROOT)/build/collection/ansible_collections/deevnet/net
# Every crate under modules/ with a main.rs is a module binary; the runtime is a library.
MODULES := $(patsubst $(ROOT)/modules/%/src/main.rs,%,$(wildcard $(ROOT)/modules/*/src/main.rs))
TARBALL := $(ROOT)/dist/deevnet-net-$(VERSION).tar.gz
# Where the module binaries go in the collection (the links in plugins/modules point there).
BIN_DIR := plugins/plugin_utils/_bin
# galaxy.yml's URLs, given to the build (make collection REPOSITORY_URL=https://... ISSUES_URL=...
# HOMEPAGE_URL=... DOCUMENTATION_URL=...); without them a build is a test build, whose
# example.invalid values no release may carry (`make release` checks).
TEST_URL := https://example.invalid/deevnet.net
REPOSITORY_URL ?= $(TEST_URL)/repository
ISSUES_URL ?= $(TEST_URL)/issues
HOMEPAGE_URL ?= $(TEST_URL)/homepage
DOCUMENTATION_URL ?= $(TEST_URL)/documentation
RELEASE_URL_VARS := REPOSITORY_URL ISSUES_URL HOMEPAGE_URL DOCUMENTATION_URL

.PHONY: release-binaries collection-stage collection sanity notices
release-binaries:
	cargo build --release --locked $(addprefix -p ,$(MODULES))

# Third-party notices: every crate the workspace links (build scripts and test-only crates are
# not linked), its license checked against the allow-list in mk/notices/about.toml (licenses
# compatible with GPL-3.0-or-later: cargo-about fails on any other), rendered as
# THIRD-PARTY-NOTICES.md for the tarball. The rendered file is committed
# (mk/notices/THIRD-PARTY-NOTICES.md), so building the collection (make demo, a user's build)
# needs no cargo-about; `make notices` renders it again after the crates changed, and
# `make notices-check` (make test) fails while the committed file differs from a fresh render.
# cargo-about is installed from crates.io when missing.
CARGO_ABOUT_VERSION := 0.8.4
NOTICES_DIR := $(ROOT)/build/notices
NOTICES := $(ROOT)/mk/notices/THIRD-PARTY-NOTICES.md
RENDERED_NOTICES := $(NOTICES_DIR)/THIRD-PARTY-NOTICES.md
.PHONY: notices-check
notices: $(RENDERED_NOTICES)
	cp $< $(NOTICES)
notices-check: $(RENDERED_NOTICES)
	@cmp -s $< $(NOTICES) || { diff -u $(NOTICES) $< | head -n 40; \
	  echo "mk/notices/THIRD-PARTY-NOTICES.md differs from the crates the binaries link: run make notices and commit it"; exit 1; }
# Regenerated when the crates can have changed (scanning the license texts takes about a minute).
$(NOTICES_DIR)/crates.json: $(ROOT)/Cargo.lock $(ROOT)/Cargo.toml $(wildcard $(ROOT)/modules/*/Cargo.toml) $(ROOT)/mk/notices/about.toml
	@cargo about --version 2>/dev/null | grep -qx 'cargo-about $(CARGO_ABOUT_VERSION)' || \
	  { echo "== installing cargo-about $(CARGO_ABOUT_VERSION)"; cargo install cargo-about --locked --version $(CARGO_ABOUT_VERSION); }
	@mkdir -p $(NOTICES_DIR)
	@# cargo-about reads every package of the lock file, also those of other platforms (r-efi),
	@# which no build here downloads; --frozen forbids it, so they are fetched first.
	cd $(ROOT) && cargo fetch --locked --quiet
	cd $(ROOT) && cargo about generate --frozen --workspace --manifest-path Cargo.toml -c mk/notices/about.toml \
	  --format json -o $@.tmp && mv $@.tmp $@
$(RENDERED_NOTICES): $(NOTICES_DIR)/crates.json $(ROOT)/mk/notices/render.py $(VENV)/.installed
	$(PY) $(ROOT)/mk/notices/render.py $< > $@.tmp && mv $@.tmp $@

# The stage is rebuilt from scratch so that nothing stale (a removed module) is ever packed.
# Its README.md is collection/README.md (for the collection's users); the repository's README.md
# (for people who build and test it) is not packed. docs/ holds reference pages the users' README
# and the modules link to.
# Each module's binary is plugins/plugin_utils/_bin/<name> (BIN_DIR), and plugins/modules/<name>
# a link to it: ansible-core runs the binary through the link, and `ansible-doc -l`, which skips
# links, reads only the .py documentation. A binary there itself would be listed too, and
# whichever of the two the folder lists last would be read (ext4 lists in hash order): reading
# the ELF file fails, and the module is left out of the list with a "documentation formatting
# error" warning. The binaries live under plugins/ because Galaxy's collection layout allows
# content only there (and in meta/, roles/, playbooks/), and ansible-test sanity reads every
# file of a top-level bin/ as a Python script (compile, pep8 and pylint fail on ELF files); the
# leading underscore marks the folder as no Python package or plugin type of its own.
# The metadata URLs (galaxy.yml's repository, issues, homepage, documentation) are inputs of the
# build, never committed: a test build gets clearly-fake ones (example.invalid), and
# `make release` refuses to build without real ones.
# make test's two lanes (Makefile: test) run with STAGED=1: the collection, its tarball and the
# stage with the scenarios were built once before them, and rebuilt in one lane they would be
# removed under the other's running tests. There these targets only check that they exist.
.PHONY: staged-check
staged-check:
	@test -d $(STAGE_WITH_SCENARIOS) -a -f $(TARBALL) || { echo "STAGED=1, but nothing is staged: run make collection stage-with-scenarios first"; exit 1; }
ifneq ($(STAGED),1)
collection-stage: release-binaries venv
	@rm -rf $(STAGE) && mkdir -p $(STAGE)/plugins/modules
	@cp $(ROOT)/galaxy.yml $(ROOT)/COPYING $(NOTICES) $(STAGE)/
	@printf '%s: %s\n' repository '$(REPOSITORY_URL)' issues '$(ISSUES_URL)' homepage '$(HOMEPAGE_URL)' \
	  documentation '$(DOCUMENTATION_URL)' >> $(STAGE)/galaxy.yml
	@cp -r $(ROOT)/collection/. $(STAGE)/
	@test -f $(STAGE)/README.md || { echo "collection/README.md is missing: the collection needs its users' README"; exit 1; }
	@cp -r $(ROOT)/docs $(STAGE)/
	@if [ -d $(ROOT)/roles ]; then cp -r $(ROOT)/roles $(STAGE)/; fi
	@for m in $(MODULES); do \
	  test -f $(ROOT)/collection/plugins/modules/$$m.py || { echo "modules/$$m has no documentation file collection/plugins/modules/$$m.py"; exit 1; }; \
	  test -f $(ROOT)/collection/plugins/action/$$m.py || { echo "modules/$$m has no action plugin collection/plugins/action/$$m.py (copy another module's: it names the shared class)"; exit 1; }; \
	  install -D -m 0755 $(ROOT)/target/release/$$m $(STAGE)/$(BIN_DIR)/$$m; \
	  ln -s ../$(BIN_DIR:plugins/%=%)/$$m $(STAGE)/plugins/modules/$$m; done
	@cd $(STAGE) && PATH=$(VENV)/bin:$$PATH $(VENV)/bin/antsibull-changelog release --version $(VERSION) --date $$(git -C $(ROOT) log -1 --format=%cs 2>/dev/null || date +%F)
	@$(PY) $(ROOT)/mk/tidy_yaml.py $(STAGE)/changelogs/changelog.yaml
	@echo "== staged $(STAGE) with modules: $(MODULES)"
else
collection-stage: staged-check
endif

ifneq ($(STAGED),1)
collection: collection-stage venv
	@mkdir -p $(ROOT)/dist
	$(VENV)/bin/ansible-galaxy collection build --force --output-path $(ROOT)/dist $(STAGE)
	@echo "== built $(TARBALL)"
else
collection: staged-check
endif

# The tarball to publish: the same build, refused unless every URL is given and real (https, not
# the test build's example.invalid).
.PHONY: release release-urls
release-urls:
	@bad=; for pair in $(foreach v,$(RELEASE_URL_VARS),'$(v)=$($(v))'); do name=$${pair%%=*} url=$${pair#*=}; \
	  case "$$url" in https://*.invalid|https://*.invalid/*|*[[:space:]\'\"]*) bad="$$bad $$name";; https://?*) ;; *) bad="$$bad $$name";; esac; done; \
	  [ -z "$$bad" ] || { echo "make release needs a real https URL for each of:$$bad (make release REPOSITORY_URL=https://... ISSUES_URL=... HOMEPAGE_URL=... DOCUMENTATION_URL=...; they go into galaxy.yml)"; exit 1; }
release: release-urls
	$(MAKE) -C $(ROOT) collection

# ansible-lint and molecule run from the stage: there the collection has its binaries and
# documentation where Ansible looks for them (the repository root keeps them apart).
STAGE_WITH_SCENARIOS := $(ROOT)/build/lint/ansible_collections/deevnet/net
.PHONY: ansible-lint stage-with-scenarios
ifneq ($(STAGED),1)
stage-with-scenarios: collection-stage
	@rm -rf $(STAGE_WITH_SCENARIOS) && mkdir -p $(dir $(STAGE_WITH_SCENARIOS))
	@cp -r $(STAGE) $(STAGE_WITH_SCENARIOS)
	@cp -r $(ROOT)/molecule $(ROOT)/.ansible-lint $(STAGE_WITH_SCENARIOS)/
else
stage-with-scenarios: staged-check
endif

ansible-lint: stage-with-scenarios venv
	cd $(STAGE_WITH_SCENARIOS) && HOME=$(ROOT)/build/lint-home ANSIBLE_COLLECTIONS_PATH=$(ROOT)/build/lint $(VENV)/bin/ansible-lint --offline

# molecule test: the lab VM (its own run folder, so it never collides with `make lab-*`) is the
# instance; Ansible finds the staged collection, binaries included, through
# ANSIBLE_COLLECTIONS_PATH (molecule's prerun, which would install it into ~/.ansible, is off).
# Two scenarios on the same lab image, one after the other: default (an exit node, tenants that
# come and go, the transit device re-created, a reboot) and member (a member node, a QinQ-only
# node).
# A molecule run's environment for the lab run folder $(1): its own SSH control sockets there
# (Ansible's default folder is shared by every run of the user, so two labs up at once would
# reach each other's hosts by the same names).
molecule_env = DEEVNET_REPO_ROOT=$(ROOT) LAB_RUN_DIR=$(1) ANSIBLE_SSH_CONTROL_PATH_DIR=$(1)/ssh-cp \
	  ANSIBLE_COLLECTIONS_PATH=$(ROOT)/build/lint MOLECULE_GLOB='molecule/*/molecule.yml' PATH=$(VENV)/bin:$$PATH
MOLECULE_LAB_SCENARIOS := default member sdn
.PHONY: molecule
molecule: stage-with-scenarios venv
	cd $(STAGE_WITH_SCENARIOS) && for scenario in $(MOLECULE_LAB_SCENARIOS); do \
	  $(call molecule_env,$(ROOT)/build/lab-molecule) $(VENV)/bin/molecule test -s $$scenario || exit 1; done

# The two-member EVPN fabric in podman containers inside a lab VM (tests/lab/fabric/README.md):
# about 3 minutes warm, 8 cold (its image is built once and cached).
.PHONY: molecule-fabric
molecule-fabric: stage-with-scenarios venv
	cd $(STAGE_WITH_SCENARIOS) && $(call molecule_env,$(ROOT)/build/lab-fabric) $(VENV)/bin/molecule test -s fabric

# The all-exit fabric: three exit nodes on an IPv6 BGP-unnumbered underlay, in podman containers
# inside the fabric lab's VM (tests/lab/all-exit/README.md). molecule-all-exit-faults stops after
# prepare: the topology and the field report's faults, shown before any role runs. About 5 min
# warm (tests/lab/all-exit/README.md); in make test.
ALL_EXIT_MOLECULE = cd $(STAGE_WITH_SCENARIOS) && $(call molecule_env,$(ROOT)/build/lab-all-exit) $(VENV)/bin/molecule
# The QinQ lab: three hypervisors with QinQ uplinks (two bonded, one single-NIC), the acceptance
# matrix, the full-MTU proof and the guest guard, in the fabric lab's VM (tests/lab/qinq/README.md).
.PHONY: molecule-qinq
molecule-qinq: stage-with-scenarios venv
	cd $(STAGE_WITH_SCENARIOS) && $(call molecule_env,$(ROOT)/build/lab-qinq) $(VENV)/bin/molecule test -s qinq

.PHONY: molecule-all-exit molecule-all-exit-faults
molecule-all-exit: stage-with-scenarios venv
	$(ALL_EXIT_MOLECULE) test -s all-exit
molecule-all-exit-faults: stage-with-scenarios venv
	$(ALL_EXIT_MOLECULE) destroy -s all-exit
	$(ALL_EXIT_MOLECULE) create -s all-exit && $(ALL_EXIT_MOLECULE) prepare -s all-exit; rc=$$?; $(ALL_EXIT_MOLECULE) destroy -s all-exit; exit $$rc
