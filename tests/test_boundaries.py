"""The package boundaries of docs/architecture.md ("mail/ and mta/"), read from the source.

Every module's imports are parsed with ast (module level, in functions and
under TYPE_CHECKING alike), so a forbidden import fails here by name, not in
review. The SQL check reads the string constants: mta's SQL names no table
of mail's schema, and mail's names mta's tables only in the directory's
recipient statement.
"""

from __future__ import annotations

import ast
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
# The one mail module whose SQL may read mta tables (by address id, read-only).
MTA_TABLES_READ_BY = {"mail/directory.py"}


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
    assert not found, f"read mail's tables through mail/directory.py: {found}"


def test_mail_sql_reads_mta_tables_only_in_the_directory() -> None:
    reads = list(sql_reads("mail", "mta"))
    outside = [r for r in reads if r[0] not in MTA_TABLES_READ_BY]
    assert not outside, f"reach the mailbox store through mta/mailstore.py: {outside}"
    # The check sees the statement it allows (else it would pass vacuously).
    assert {table for _, _, table in reads} == {"mta.filters", "mta.mailboxes", "mta.quota_usage"}


# Modules outside mta/store/ whose SQL may still name mta's tables, and why.
MTA_SQL_OUTSIDE_THE_STORE = {
    # The directory's recipient and quota statements join mail's addresses to
    # mta.filters, mta.mailboxes and mta.quota_usage in one round trip per RCPT;
    # they move when the directory becomes a leaf package (issue 31, item 1).
    "mail/directory.py",
}


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


def test_every_module_of_mta_jmap_imports_alone_in_a_fresh_interpreter() -> None:
    """A module that only imports after some other one (an import cycle) fails here."""
    names = [module_name(relative) for relative, _ in modules("mta/jmap")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    running = {
        name: subprocess.Popen(
            [sys.executable, "-c", f"import {name}"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    }
    failed = {}
    for name, process in running.items():
        _, err = process.communicate(timeout=120)
        if process.returncode:
            failed[name] = err.strip().splitlines()[-1:]
    assert len(names) > 20
    assert not failed, f"these modules do not import alone: {failed}"


@pytest.mark.parametrize(
    ("importer", "name", "ok"),
    [
        ("mail.filters.service", "mta.mailstore.compile_script", True),
        ("mail.filters.service", "mta.sieve.compiler.compile_script", False),
        ("mail.mailboxes.routes", "mta.store.quota", False),
        ("mta.smtp.rcpt", "mail.directory.lookup_recipient", True),
        ("mta.smtp.rcpt", "mail.domains.store", False),
        ("mta.smtp.rcpt", "mail", False),
        ("oauth.tokens", "mail.accounts", False),
        ("content.entries", "mta.store", False),
        ("common.web", "mail.errors", False),
        ("gateway.app", "mta.service", True),
    ],
)
def test_the_rules_themselves(importer: str, name: str, ok: bool) -> None:
    assert allowed(importer, name) is ok
