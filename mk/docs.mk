# The collection's docsite, built with antsibull-docs and Sphinx offline (make docs): module, filter
# and role pages from the staged collection, the extra docs (docs/docsite/extra-docs.yml: the role
# README and docs/*.md, as RST made by mk/docsite.py) and docs/docsite/links.yml.
# The build fetches nothing (no intersphinx inventory: mk/docsite.py offline); every Sphinx
# warning fails it except the unresolved labels of Ansible's own docs, which mk/docsite.py names. `make docs-test` lints the collection's docs, checks that every option and return value
# of every module is on its page, and opens a page in headless Chromium (screenshot kept in
# build/docs/screenshot.png).
DOCS := $(ROOT)/build/docs
DOCSITE := $(DOCS)/site

.PHONY: docs docs-rst docs-test chromium pandoc
docs-rst:
	$(PY) $(ROOT)/mk/docsite.py rst

docs: collection-stage venv pandoc
	$(PY) $(ROOT)/mk/docsite.py rst --check
	@rm -rf $(DOCS) && mkdir -p $(DOCSITE) && chmod 0700 $(DOCSITE)
	cd $(DOCSITE) && ANSIBLE_COLLECTIONS_PATH=$(ROOT)/build/collection PATH=$(VENV)/bin:$$PATH \
	  antsibull-docs sphinx-init --use-current --fail-on-error --dest-dir $(DOCSITE) deevnet.net >/dev/null
	$(PY) $(ROOT)/mk/docsite.py offline $(DOCSITE)/conf.py
	mkdir -p $(DOCSITE)/rst && chmod og-w $(DOCSITE)/rst
	cd $(DOCSITE) && ANSIBLE_COLLECTIONS_PATH=$(ROOT)/build/collection PATH=$(VENV)/bin:$$PATH \
	  antsibull-docs --config-file antsibull-docs.cfg collection --cleanup everything --fail-on-error --use-current --dest-dir rst deevnet.net
	cd $(DOCSITE) && ANSIBLE_COLLECTIONS_PATH=$(ROOT)/build/collection PATH=$(VENV)/bin:$$PATH \
	  sphinx-build -q -b html -c . -w $(DOCS)/sphinx-warnings.txt rst $(DOCS)/html
	$(PY) $(ROOT)/mk/docsite.py warnings $(DOCS)/sphinx-warnings.txt
	@echo "== docsite: $(DOCS)/html/index.html"

# Debian's pandoc, for the extra docs' check.
pandoc:
	@command -v pandoc >/dev/null || { echo "== installing: pandoc (the extra docs' check)"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pandoc >/dev/null; }

# Debian's Chromium, for the docsite's render check (headless).
chromium:
	@command -v chromium >/dev/null || { echo "== installing: chromium"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

docs-test: docs chromium
	cd $(ROOT)/build/collection/ansible_collections/deevnet/net && PATH=$(VENV)/bin:$$PATH ANSIBLE_COLLECTIONS_PATH=$(ROOT)/build/collection \
	  $(VENV)/bin/antsibull-docs lint-collection-docs --plugin-docs .
	$(PY) -m pytest -q -p no:cacheprovider $(ROOT)/tests/docs
