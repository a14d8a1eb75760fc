# The two commands: `make run` and `make test`. Both create .venv when it is
# missing or older than the requirements, then do their job.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
export XDG_RUNTIME_DIR ?= /tmp/svc-runtime-$(shell id -u)

.PHONY: run test dev start typecheck tidy lint docs password clean

$(STAMP): requirements/base.txt requirements/dev.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Python 3.11 or newer is required ($(PYTHON))"; exit 1; }
	@test -x $(PY) && $(PY) -c 'import sys' 2>/dev/null || { rm -rf $(VENV); $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/dev.txt
	@touch $(STAMP)

run: $(STAMP)  ## serve everything on http://localhost:4300 with an embedded database
	$(PY) -m gateway

# The fast checks run first, so CI holds the same style `make lint` holds.
test: $(STAMP) lint typecheck docs  ## checks, then the whole suite, one worker (and one throw-away PostgreSQL) per core
	$(PY) -m pytest -n auto

dev: $(STAMP)  ## like run, restarting when a .py file changes
	$(PY) -m gateway.reload

start: $(STAMP)  ## production: one process, refuses a development environment
	$(PY) -m gateway --production

typecheck: $(STAMP)
	$(PY) -m mypy common gateway oauth content mail mta

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

clean:
	rm -rf $(VENV)
