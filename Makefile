# The README's two commands: `make run` and `make test`. Everything else is a helper.
SHELL := /bin/bash
PYTHON_BIN ?= python3
VENV := .venv
PY := $(VENV)/bin/python
FLASK := $(VENV)/bin/flask --app app
HOST ?= 127.0.0.1
PORT ?= 5000

.PHONY: run test test-unit lint format bench clean help screenshots researcher \
	i18n-extract i18n-update i18n-compile i18n-init

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(VENV)/.installed: requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON_BIN) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -e .
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	@touch $@

run: $(VENV)/.installed ## Set up and serve the demo (its own study, `demo`) on http://127.0.0.1:5000 (SQLite; HOST=, PORT= to change)
	$(FLASK) db upgrade
	$(FLASK) create-study demo --taxonomy config/taxonomy.yaml --title "Demo study" --exist-ok
	$(FLASK) import-documents data/demo --study demo
	@$(FLASK) list-documents --study demo --base-url http://$(HOST):$(PORT)
	$(FLASK) run --host $(HOST) --port $(PORT)

test: $(VENV)/.installed-dev ## Set up and run every test: import contracts, unit, integration (SQLite + PostgreSQL), browser
	$(VENV)/bin/lint-imports --no-logo  # who may import whom: pyproject.toml, docs/architecture.md
	PYTHON=$(PY) ./scripts/ensure-browser.sh
	./scripts/ensure-services.sh
	./scripts/with-postgres.sh $(PY) -m pytest

test-unit: $(VENV)/.installed-dev ## Only the unit tests (no database, no browser)
	$(PY) -m pytest tests/unit

lint: $(VENV)/.installed-dev ## ruff check and format check, and the import contracts
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-logo

format: $(VENV)/.installed-dev ## ruff format and autofix
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

researcher: $(VENV)/.installed ## Create a login for /research/: make researcher EMAIL=you@example.org
	@test -n "$(EMAIL)" || { echo "usage: make researcher EMAIL=you@example.org" >&2; exit 2; }
	$(FLASK) db upgrade
	$(FLASK) create-researcher "$(EMAIL)"

screenshots: $(VENV)/.installed-dev ## Remake the README's screenshots (docs/screenshots/*.png) from the demo data
	PYTHON=$(PY) ./scripts/screenshots.sh

bench: $(VENV)/.installed-dev ## Run the benchmarks (prints ratios to in-run baselines)
	./scripts/with-postgres.sh $(PY) -m bench $(BENCH_ARGS)

# Interface translations (docs/i18n.md): two domains, `messages` (templates, Python; compiled
# to the committed .mo files Flask-Babel reads) and `js` (the ES modules' t() calls; its .po
# is read as it is by app/core/i18n.py, so it needs no compiling).
PYBABEL := $(VENV)/bin/pybabel
I18N_COPYRIGHT := --project=falte-annotation --copyright-holder="the project's authors" --no-location --sort-output

i18n-extract: $(VENV)/.installed ## Collect the interface's strings into translations/messages.pot and js.pot
	$(PYBABEL) extract -F babel.cfg -k _ -k gettext -k ngettext:1,2 -k lazy_gettext $(I18N_COPYRIGHT) -o translations/messages.pot .
	$(PYBABEL) extract -F babel-js.cfg -k t --no-default-keywords $(I18N_COPYRIGHT) -o translations/js.pot .

i18n-update: i18n-extract ## Merge new strings into every language's .po (then translate them, then make i18n-compile)
	$(PYBABEL) update -N -i translations/messages.pot -d translations -D messages -w 100
	$(PYBABEL) update -N -i translations/js.pot -d translations -D js -w 100

i18n-init: i18n-extract ## Start a language: make i18n-init LANG_CODE=fr (Babel's locale name, e.g. zh_Hant)
	@test -n "$(LANG_CODE)" || { echo "usage: make i18n-init LANG_CODE=fr" >&2; exit 2; }
	$(PYBABEL) init -i translations/messages.pot -d translations -D messages -l $(LANG_CODE)
	$(PYBABEL) init -i translations/js.pot -d translations -D js -l $(LANG_CODE)

i18n-compile: $(VENV)/.installed ## Compile the messages .po files to the .mo files the app reads (committed)
	$(PYBABEL) compile --statistics -d translations -D messages

clean: ## Remove the virtualenv and the local database
	rm -rf $(VENV) instance .pytest_cache
