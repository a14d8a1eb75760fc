"""The package boundaries of docs/architecture.md ("mail/ and mta/"), read from the source.

Every module's imports are parsed with ast (module level, in functions and
under TYPE_CHECKING alike), so a forbidden import fails here by name, not in
review. The SQL check reads the string constants: mta's SQL names no table
of mail's schema, and mail's names mta's tables only in the directory's
recipient statement.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ("oauth", "content", "mail", "mta", "gateway")
PACKAGES = (*SERVICES, "common")

# The two interfaces: the one module of each side the other may import.
MAIL_DIRECTORY = "mail.directory"
MTA_MAILSTORE = "mta.mailstore"
# The directory's modules whose SQL reads mta tables (by address id, read-only):
# the recipient statement and the storage sums (why: MTA_SQL_OUTSIDE_THE_STORE).
MTA_TABLES_READ_BY = {"mail/directory/recipients.py", "mail/directory/storage.py"}


def modules(package: str) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted((ROOT / package).rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        yield relative, ast.parse(path.read_text(encoding="utf-8"), filename=relative)


def module_name(relative: str) -> str:
    return relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def imported(relative: str, tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every import; ``from a import b`` yields ``a.b``."""
    package = module_name(relative)
    if not relative.endswith("__init__.py"):
        package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def top(name: str) -> str:
    return name.split(".", 1)[0]


def within(name: str, module: str) -> bool:
    """``name`` is ``module`` or a name inside it (``mta.mailstore.folders``)."""
    return name == module or name.startswith(module + ".")


def allowed(importer: str, name: str) -> bool:
    side, other = top(importer), top(name)
    if side == other or other not in SERVICES:
        return True  # its own package, common/, the standard library, third parties
    if side == "mail" and other == "mta":
        return within(name, MTA_MAILSTORE)
    if side == "mta" and other == "mail":
        return within(name, MAIL_DIRECTORY)
    if side == "common":
        return False  # common/ serves the services and knows none of them
    if side in ("oauth", "content"):
        return other not in ("oauth", "content", "mail", "mta")
    return side == "gateway"  # the gateway composes them all


def violations(packages: tuple[str, ...]) -> list[str]:
    found = []
    for package in packages:
        for relative, tree in modules(package):
            importer = module_name(relative)
            for line, name in imported(relative, tree):
                if not allowed(importer, name):
                    found.append(f"{relative}:{line} imports {name}")
    return found


def test_mail_and_mta_meet_only_at_the_directory_and_the_mailstore() -> None:
    found = violations(("mail", "mta"))
    assert not found, (
        f"mail/ may import only {MTA_MAILSTORE} of mta/, and mta/ only {MAIL_DIRECTORY}"
        " of mail/ (docs/architecture.md, 'mail/ and mta/'):\n" + "\n".join(found)
    )


def test_oauth_content_and_common_import_no_other_service() -> None:
    found = violations(("oauth", "content", "common"))
    assert not found, "oauth/ and content/ import no other service, common/ none:\n" + "\n".join(
        found
    )


def tables(package: str) -> set[str]:
    sql = " ".join(p.read_text() for p in (ROOT / package / "migrations").glob("*.sql"))
    return set(re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", sql))


def sql_reads(package: str, schema: str) -> Iterator[tuple[str, int, str]]:
    """(module, line, schema.table) of each SQL reference to ``schema``'s tables."""
    names = "|".join(sorted(tables(schema)))
    pattern = re.compile(rf"\b(?:FROM|JOIN|INTO|UPDATE|REFERENCES|TABLE)\s+{schema}\.({names})\b")
    for relative, tree in modules(package):
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for match in pattern.finditer(node.value):
                    yield relative, node.lineno, f"{schema}.{match.group(1)}"


def test_mta_sql_reads_no_table_of_mail() -> None:
    found = list(sql_reads("mta", "mail"))
    assert not found, f"read mail's tables through mail/directory/: {found}"


def test_mail_sql_reads_mta_tables_only_in_the_directory() -> None:
    reads = list(sql_reads("mail", "mta"))
    outside = [r for r in reads if r[0] not in MTA_TABLES_READ_BY]
    assert not outside, f"reach the mailbox store through mta/mailstore.py: {outside}"
    # The check sees the statement it allows (else it would pass vacuously).
    assert {table for _, _, table in reads} == {
        "mta.filters",
        "mta.mailboxes",
        "mta.quota_usage",
        "mta.vacation_responses",
    }


# Modules outside mta/store/ whose SQL may still name mta's tables, and why.
# The directory's recipient and quota statements join mail's addresses to
# mta.filters, mta.mailboxes, mta.quota_usage and mta.vacation_responses
# (whether one is enabled) in one round trip per RCPT
# (two statements otherwise, on the hottest path of SMTP), and the directory
# is a leaf that imports only common/, so it cannot call mta/store for them.
# They only read, by address id; docs/architecture.md lists the columns.
MTA_SQL_OUTSIDE_THE_STORE = MTA_TABLES_READ_BY


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring constants of a module and its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def mta_sql(pattern: str) -> Iterator[tuple[str, int, str]]:
    """(module, line, table) of each string (docstrings aside) where ``pattern``,
    formatted with the alternatives of mta's table names as ``{tables}``, matches."""
    regex = re.compile(pattern.format(tables="|".join(sorted(tables("mta")))))
    for package in PACKAGES:
        for relative, tree in modules(package):
            docs = _docstrings(tree)
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and id(node) not in docs
                ):
                    for match in regex.finditer(node.value):
                        yield relative, node.lineno, f"mta.{match.group(1)}"


def test_sql_naming_an_mta_table_lives_in_mta_store() -> None:
    found = [
        f"{module}:{line} names {table}"
        for module, line, table in mta_sql(r"\bmta\.({tables})\b")
        if not module.startswith("mta/store/") and module not in MTA_SQL_OUTSIDE_THE_STORE
    ]
    assert not found, (
        "SQL on mta's tables belongs in mta/store/ (a function taking the connection"
        " first, returning records):\n" + "\n".join(found)
    )
    # The check sees SQL where it is allowed (else it would pass vacuously).
    assert any(m.startswith("mta/store/") for m, _, _ in mta_sql(r"\bmta\.({tables})\b"))


def test_each_mta_table_is_written_by_one_store_module() -> None:
    writers: dict[str, set[str]] = defaultdict(set)
    for module, _, table in mta_sql(
        r"\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+mta\.({tables})\b"
    ):
        writers[table].add(module)
    shared = {t: sorted(m) for t, m in writers.items() if len(m) > 1}
    assert not shared, f"each table has one writer (a module of mta/store/): {shared}"
    outside = {
        t: sorted(m) for t, m in writers.items() if not all(w.startswith("mta/store/") for w in m)
    }
    assert not outside, f"mta's tables are written only in mta/store/: {outside}"
    for table in ("emails", "email_mailboxes", "threads", "changes", "quota_usage", "mailboxes"):
        assert f"mta.{table}" in writers, f"the check no longer sees the writer of mta.{table}"


def test_mta_imports_only_the_directory_package_of_mail() -> None:
    reads = [
        (relative, line, name)
        for relative, tree in modules("mta")
        for line, name in imported(relative, tree)
        if top(name) == "mail"
    ]
    outside = [r for r in reads if not within(r[2], MAIL_DIRECTORY)]
    assert not outside, f"mta/ imports only {MAIL_DIRECTORY} of mail/: {outside}"
    assert reads, "the check no longer sees mta's imports of the directory"


def test_the_directory_imports_only_common() -> None:
    found = [
        f"{relative}:{line} imports {name}"
        for relative, tree in modules("mail/directory")
        for line, name in imported(relative, tree)
        if top(name) in (*PACKAGES, "tests", "benchmarks")
        and not within(name, MAIL_DIRECTORY)
        and top(name) != "common"
    ]
    assert not found, "mail/directory/ is a leaf: it imports only common/:\n" + "\n".join(found)


def test_a_fresh_interpreter_importing_rcpt_loads_no_other_mail_module() -> None:
    """The SMTP daemon's RCPT stage needs the directory, not the mail service behind it."""
    script = (
        "import sys, mta.smtp.rcpt\n"
        "print('\\n'.join(m for m in sys.modules if m.split('.')[0] == 'mail'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    others = [m for m in out if m != "mail" and not within(m, MAIL_DIRECTORY)]
    assert not others, f"{len(others)} other mail modules loaded: {sorted(others)}"
    assert MAIL_DIRECTORY in out  # (else the check would pass vacuously)


def _runtime_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: module level and in functions alike,
    blocks under ``if TYPE_CHECKING`` aside (they never run)."""
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skipped:
            yield node


def import_graph() -> dict[str, set[str]]:
    """First-party module -> the first-party modules it imports (a name imported from
    a module, not a submodule, is an edge to that module)."""
    trees = {module_name(rel): (rel, tree) for p in PACKAGES for rel, tree in modules(p)}
    graph: dict[str, set[str]] = {}
    for name, (relative, tree) in trees.items():
        edges = set()
        for node in _runtime_imports(tree):
            sub = ast.Module(body=[node], type_ignores=[])
            for _, dotted in imported(relative, sub):
                target = dotted if dotted in trees else dotted.rpartition(".")[0]
                if target in trees and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_module_cycle_in_the_tree() -> None:
    graph = import_graph()
    assert len(graph) > 300 and graph["mta.smtp.rcpt"]
    # The finder itself sees a cycle (else it would pass vacuously).
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    found = cycles(graph)
    assert not found, "import cycles (a function-level import too):\n" + "\n".join(
        " -> ".join(c) for c in found
    )


# Imports each name in a child forked from a process that holds only the
# standard library and the third-party packages the tree uses, so every child
# is a fresh interpreter as far as the tree goes, without paying Python's and
# the libraries' start-up per module. Prints "name: error" for each failure.
_IMPORT_ALONE = """
import importlib, json, os, runpy, signal, sys
work = json.load(sys.stdin)
for name in work["third_party"]:
    try:
        importlib.import_module(name)
    except Exception:
        pass
pending, running, failed = list(work["jobs"]), {}, []
while pending or running:
    while pending and len(running) < work["parallel"]:
        job = pending.pop()
        pid = os.fork()
        if pid == 0:
            signal.alarm(60)  # a hang fails (SIGALRM ends the child) instead of waiting
            try:
                if job["script"]:
                    runpy.run_path(job["script"], run_name="imported_alone")
                for name in job["modules"]:
                    importlib.import_module(name)
            except BaseException as exc:
                os.write(2, f"{job['label']}: {type(exc).__name__}: {exc}\\n".encode())
                os._exit(1)
            os._exit(0)
        running[pid] = job["label"]
    pid, status = os.wait()
    if status:
        failed.append(running[pid])
        print(running[pid], status, file=sys.stderr)
    del running[pid]
print(json.dumps(failed))
"""


def test_every_module_and_benchmark_imports_alone_in_a_fresh_interpreter() -> None:
    """A module that only imports after some other one (an import cycle) fails here;
    a benchmark runs its module level and imports every module of the tree it names
    (in functions too), which is where benchmarks/jmap_query.py broke."""
    trees = [(rel, tree) for p in PACKAGES for rel, tree in modules(p)]
    names = {module_name(rel) for rel, _ in trees}
    # A __main__ module runs its daemon when imported: that is its purpose.
    jobs = [
        {"label": n, "script": None, "modules": [n]}
        for n in sorted(names)
        if not n.endswith(".__main__")
    ]
    third_party: set[str] = set()
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = {
            target
            for _, dotted in imported(f"benchmarks/{path.name}", tree)
            for target in (dotted, dotted.rpartition(".")[0])
            if target in names
        }
        jobs.append({"label": path.name, "script": str(path), "modules": sorted(named)})
    for rel, tree in trees:
        third_party |= {
            top(dotted)
            for _, dotted in imported(rel, tree)
            if top(dotted) not in (*PACKAGES, "tests", "benchmarks", "__future__")
        }
    work = {"jobs": jobs, "third_party": sorted(third_party), "parallel": os.cpu_count() or 2}
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALONE],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        input=json.dumps(work),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    failed = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(jobs) > 300 and sum(j["script"] is not None for j in jobs) >= 10
    assert not failed, f"these do not import alone: {failed}\n{result.stderr[-3000:]}"


# Every path that sends, and the module each calls submit() from.
SENDING_PATHS = {
    "the sending API": "mail/sending/service.py",
    "webmail": "mail/webmail/messages.py",
    "the panel's own mail": "mail/outbox/service.py",
    "SMTP submission": "mta/submission/server.py",
    "JMAP EmailSubmission": "mta/jmap/submission.py",
    "vacation replies": "mta/vacation.py",
    "Sieve redirects": "mta/redirect.py",
    "returned bounces": "mta/smtp/data.py",
    "DSNs": "mta/outbound/worker.py",
}
SUBMIT = "mta/outbound/submit.py"


def _queue_calls(relative: str, tree: ast.Module) -> Iterator[int]:
    """Lines calling mta.store.outbound's enqueue, however it was imported."""
    aliases, direct = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full == "mta.store.outbound":
                    aliases.add(alias.asname or alias.name)
                if full == "mta.store.outbound.enqueue":
                    direct.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (
                isinstance(f, ast.Attribute)
                and f.attr == "enqueue"
                and isinstance(f.value, ast.Name)
                and f.value.id in aliases
            ) or (isinstance(f, ast.Name) and f.id in direct):
                yield node.lineno


def _calls_submit(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name == "submit":
                return True
    return False


def test_every_sending_path_goes_through_submit() -> None:
    """One way to send: the plan's sends, the sender rule, OUTBOUND_MAX_LIFETIME and
    the queue are applied in mta/outbound/submit.py and nowhere else."""
    trees = {rel: tree for p in PACKAGES for rel, tree in modules(p)}
    callers = {rel: list(_queue_calls(rel, tree)) for rel, tree in trees.items()}
    outside = {rel: lines for rel, lines in callers.items() if lines and rel != SUBMIT}
    assert not outside, f"only {SUBMIT} queues mail (call submit()): {outside}"
    assert callers[SUBMIT], "the check no longer sees submit()'s own enqueue"
    missing = [path for path, rel in SENDING_PATHS.items() if not _calls_submit(trees[rel])]
    assert not missing, f"these sending paths do not call submit(): {missing}"


@pytest.mark.parametrize(
    ("importer", "name", "ok"),
    [
        ("mail.filters.service", "mta.mailstore.compile_script", True),
        ("mail.filters.service", "mta.sieve.compiler.compile_script", False),
        ("mail.mailboxes.routes", "mta.store.quota", False),
        ("mta.smtp.rcpt", "mail.directory.lookup_recipient", True),
        ("mta.smtp.rcpt", "mail.domains.store", False),
        ("mta.smtp.rcpt", "mail", False),
        ("mta.smtp.rcpt", "mail.directory.recipients.Recipient", True),
        ("oauth.tokens", "mail.accounts", False),
        ("content.entries", "mta.store", False),
        ("common.web", "mail.errors", False),
        ("gateway.app", "mta.service", True),
    ],
)
def test_the_rules_themselves(importer: str, name: str, ok: bool) -> None:
    assert allowed(importer, name) is ok
