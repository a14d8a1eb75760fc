"""The package boundaries of docs/architecture.md ("mail/ and mta/"), read from the source.

Every module's imports are parsed with ast (module level, in functions and
under TYPE_CHECKING alike), so a forbidden import fails here by name, not in
review. The SQL check reads the string constants: mta's SQL names no table
of mail's schema, and mail's names mta's tables only in the directory's
recipient statement.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ("oauth", "content", "mail", "mta", "gateway")

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
