# Building the Galaxy collection: release binaries + documentation + roles, staged as
# build/collection/ansible_collections/deevnet/net and packed into dist/.
VERSION := $(shell sed -n 's/^version: *//p' $(ROOT)/galaxy.yml)
STAGE := $(ROOT)/build/collection/ansible_collections/deevnet/net
# Every crate under modules/ with a main.rs is a module binary; the runtime is a library.
MODULES := $(patsubst $(ROOT)/modules/%/src/main.rs,%,$(wildcard $(ROOT)/modules/*/src/main.rs))
TARBALL := $(ROOT)/dist/deevnet-net-$(VERSION).tar.gz

.PHONY: release-binaries collection-stage collection sanity
release-binaries:
	cargo build --release --locked $(addprefix -p ,$(MODULES))

# The stage is rebuilt from scratch so that nothing stale (a removed module) is ever packed.
# Its README.md is collection/README.md (for the collection's users); the repository's README.md
# (for people who build and test it) is not packed. docs/ holds reference pages the users' README
# and the modules link to.
# Each module's binary is bin/<name>, and plugins/modules/<name> a link to it: ansible-core runs
# the binary through the link, and `ansible-doc -l`, which skips links, reads only the .py
# documentation. A binary there itself would be listed too, and whichever of the two the
# folder lists last would be read (ext4 lists in hash order): reading the ELF file fails, and
# the module is left out of the list with a "documentation formatting error" warning.
collection-stage: release-binaries venv
	@rm -rf $(STAGE) && mkdir -p $(STAGE)/plugins/modules
	@cp $(ROOT)/galaxy.yml $(ROOT)/COPYING $(STAGE)/
	@cp -r $(ROOT)/collection/. $(STAGE)/
	@test -f $(STAGE)/README.md || { echo "collection/README.md is missing: the collection needs its users' README"; exit 1; }
	@cp -r $(ROOT)/docs $(STAGE)/
	@if [ -d $(ROOT)/roles ]; then cp -r $(ROOT)/roles $(STAGE)/; fi
	@for m in $(MODULES); do \
	  test -f $(ROOT)/collection/plugins/modules/$$m.py || { echo "modules/$$m has no documentation file collection/plugins/modules/$$m.py"; exit 1; }; \
	  test -f $(ROOT)/collection/plugins/action/$$m.py || { echo "modules/$$m has no action plugin collection/plugins/action/$$m.py (copy another module's: it names the shared class)"; exit 1; }; \
	  install -D -m 0755 $(ROOT)/target/release/$$m $(STAGE)/bin/$$m; \
	  ln -s ../../bin/$$m $(STAGE)/plugins/modules/$$m; done
	@cd $(STAGE) && PATH=$(VENV)/bin:$$PATH $(VENV)/bin/antsibull-changelog release --version $(VERSION) --date $$(git -C $(ROOT) log -1 --format=%cs 2>/dev/null || date +%F)
	@$(PY) $(ROOT)/mk/tidy_yaml.py $(STAGE)/changelogs/changelog.yaml
	@echo "== staged $(STAGE) with modules: $(MODULES)"

collection: collection-stage venv
	@mkdir -p $(ROOT)/dist
	$(VENV)/bin/ansible-galaxy collection build --force --output-path $(ROOT)/dist $(STAGE)
	@echo "== built $(TARBALL)"

# ansible-lint and molecule run from the stage: there the collection has its binaries and
# documentation where Ansible looks for them (the repository root keeps them apart).
STAGE_WITH_SCENARIOS := $(ROOT)/build/lint/ansible_collections/deevnet/net
.PHONY: ansible-lint stage-with-scenarios
stage-with-scenarios: collection-stage
	@rm -rf $(STAGE_WITH_SCENARIOS) && mkdir -p $(dir $(STAGE_WITH_SCENARIOS))
	@cp -r $(STAGE) $(STAGE_WITH_SCENARIOS)
	@cp -r $(ROOT)/molecule $(ROOT)/.ansible-lint $(STAGE_WITH_SCENARIOS)/

ansible-lint: stage-with-scenarios venv
	cd $(STAGE_WITH_SCENARIOS) && HOME=$(ROOT)/build/lint-home ANSIBLE_COLLECTIONS_PATH=$(ROOT)/build/lint $(VENV)/bin/ansible-lint --offline

# molecule test: the lab VM (its own run folder, so it never collides with `make lab-*`) is the
# instance; Ansible finds the staged collection, binaries included, through
# ANSIBLE_COLLECTIONS_PATH (molecule's prerun, which would install it into ~/.ansible, is off).
# Two scenarios on the same lab image, one after the other: default (an exit node, tenants that
# come and go, the transit device re-created, a reboot) and member (a member node, a QinQ-only
# node).
MOLECULE_LAB_SCENARIOS := default member sdn
.PHONY: molecule
molecule: stage-with-scenarios venv
	cd $(STAGE_WITH_SCENARIOS) && for scenario in $(MOLECULE_LAB_SCENARIOS); do \
	  DEEVNET_REPO_ROOT=$(ROOT) LAB_RUN_DIR=$(ROOT)/build/lab-molecule ANSIBLE_COLLECTIONS_PATH=$(ROOT)/build/lint \
	  MOLECULE_GLOB='molecule/*/molecule.yml' PATH=$(VENV)/bin:$$PATH $(VENV)/bin/molecule test -s $$scenario || exit 1; done

# The two-member EVPN fabric in podman containers inside a lab VM (tests/lab/fabric/README.md):
# about 3 minutes warm, 8 cold (its image is built once and cached).
.PHONY: molecule-fabric
molecule-fabric: stage-with-scenarios venv
	cd $(STAGE_WITH_SCENARIOS) && DEEVNET_REPO_ROOT=$(ROOT) LAB_RUN_DIR=$(ROOT)/build/lab-fabric ANSIBLE_COLLECTIONS_PATH=$(ROOT)/build/lint \
	  MOLECULE_GLOB='molecule/*/molecule.yml' PATH=$(VENV)/bin:$$PATH $(VENV)/bin/molecule test -s fabric

# The all-exit fabric: three exit nodes on an IPv6 BGP-unnumbered underlay, in podman containers
# inside the fabric lab's VM (tests/lab/all-exit/README.md). molecule-all-exit-faults stops after
# prepare: the topology and the field report's faults, shown before any role runs. About 5 min
# warm (tests/lab/all-exit/README.md); in make test.
ALL_EXIT_MOLECULE = cd $(STAGE_WITH_SCENARIOS) && DEEVNET_REPO_ROOT=$(ROOT) LAB_RUN_DIR=$(ROOT)/build/lab-all-exit \
	  ANSIBLE_COLLECTIONS_PATH=$(ROOT)/build/lint MOLECULE_GLOB='molecule/*/molecule.yml' PATH=$(VENV)/bin:$$PATH $(VENV)/bin/molecule
.PHONY: molecule-all-exit molecule-all-exit-faults
molecule-all-exit: stage-with-scenarios venv
	$(ALL_EXIT_MOLECULE) test -s all-exit
molecule-all-exit-faults: stage-with-scenarios venv
	$(ALL_EXIT_MOLECULE) destroy -s all-exit
	$(ALL_EXIT_MOLECULE) create -s all-exit && $(ALL_EXIT_MOLECULE) prepare -s all-exit; rc=$$?; $(ALL_EXIT_MOLECULE) destroy -s all-exit; exit $$rc
