# The controller-side Python environment: ansible-core, pytest, antsibull-changelog, ansible-runner
# and antsibull-docs with Sphinx (all pinned in requirements-dev.txt / requirements-py311.txt).
#
# ansible-core 2.20+ needs Python >= 3.12 on the controller; Debian 12's python3 is 3.11, which
# stops at 2.19. So the newest Python the machine has wins (pyenv's 3.13 on this kind of
# machine), and 3.11 still works with requirements pinned for it.
VENV := $(ROOT)/.venv
PY := $(VENV)/bin/python
PYTHON_FOR_VENV ?= $(shell for p in python3.13 python3.12 /root/.pyenv/versions/3.13*/bin/python3 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys, venv; assert sys.version_info >= (3, 11)' 2>/dev/null && { command -v $$p; break; }; done)

.PHONY: venv
venv: $(VENV)/.installed

$(VENV)/.installed: requirements-dev.txt requirements-py311.txt
	@test -n "$(PYTHON_FOR_VENV)" || { echo "no Python >= 3.11 found"; exit 1; }
	@echo "== venv: $(VENV) with $$($(PYTHON_FOR_VENV) --version) ($(PYTHON_FOR_VENV))"
	@test -x $(PY) || $(PYTHON_FOR_VENV) -m venv $(VENV)
	@if $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then req=requirements-dev.txt; else req=requirements-py311.txt; fi; \
	  echo "== installing $$req into the venv"; \
	  $(PY) -m pip install --quiet --disable-pip-version-check -r $$req
	@touch $@

# The oldest ansible-core the collection claims (meta/runtime.yml requires_ansible), for
# `make ansible-core-oldest`: 2.15 runs on Python 3.9-3.11, so Debian 12's python3.
ANSIBLE_CORE_OLDEST := 2.15.13
VENV_OLDEST := $(ROOT)/.venv-core-oldest
PYTHON_FOR_OLDEST ?= $(shell for p in python3.11 /root/.pyenv/versions/3.11*/bin/python3 python3.10 python3.9; do \
	command -v $$p >/dev/null 2>&1 && { command -v $$p; break; }; done)

# pytest and pytest-xdist as requirements-dev.txt pins them.
PYTEST_PINS = $(shell grep -E '^pytest(-xdist)?==' $(ROOT)/requirements-dev.txt)
$(VENV_OLDEST)/.installed: mk/python.mk requirements-dev.txt
	@test -n "$(PYTHON_FOR_OLDEST)" || { echo "no Python 3.9-3.11 for ansible-core $(ANSIBLE_CORE_OLDEST)"; exit 1; }
	@echo "== venv: $(VENV_OLDEST) with ansible-core $(ANSIBLE_CORE_OLDEST) on $$($(PYTHON_FOR_OLDEST) --version)"
	@test -x $(VENV_OLDEST)/bin/python || $(PYTHON_FOR_OLDEST) -m venv $(VENV_OLDEST)
	@$(VENV_OLDEST)/bin/python -m pip install --quiet --disable-pip-version-check ansible-core==$(ANSIBLE_CORE_OLDEST) $(PYTEST_PINS)
	@touch $@
