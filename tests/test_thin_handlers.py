"""Route handlers parse, call one service function and serialize (mail/README.md,
"Conventions every route follows"; content/README.md).

So no route module (``routes.py``, or a ``pages.py`` of server-rendered
screens) of mail or content opens a connection or a transaction, or reaches
the SQL: no function of a store module (``store.py``, ``mta/mailstore.py``,
``mta/store/``), of content/writes.py or of common/db.py, called or passed
along. The package's service does that work, taking the Context first, in the
shape of content/entries/service.py. A store's constants and record types stay
importable (a list's SORTS, a filter dataclass). New packages are held by
their file names alone.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ("mail", "content")
ROUTE_MODULES = ("routes.py", "pages.py")
OPENERS = ("connection", "transaction")
# Modules whose functions touch the database directly.
DATA_MODULES = ("common.db", "content.writes")
DATA_MODULE_NAMES = ("store", "mailstore")


def route_modules(service: str) -> Iterator[Path]:
    for name in ROUTE_MODULES:
        yield from sorted((ROOT / service).rglob(name))


def imported_names(tree: ast.Module) -> dict[str, str]:
    """Each name a module imports, to the dotted path it stands for."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                names[local] = alias.name if alias.asname else local
    return names


def dotted(node: ast.expr, names: dict[str, str]) -> str | None:
    """``store.list_types`` as ``content.types.store.list_types``; None if not imported."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        base = dotted(node.value, names)
        return f"{base}.{node.attr}" if base else None
    return None


def resolve(path: str) -> object | None:
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            found = getattr(found, attr, None)
        return found
    return None


def touches_data(found: object) -> bool:
    """A function that runs SQL or opens a transaction itself."""
    if isinstance(found, ModuleType) or not inspect.isfunction(found):
        return False
    module = found.__module__
    return module in DATA_MODULES or any(part in DATA_MODULE_NAMES for part in module.split("."))


def enclosing(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return f"{node.name}()"
    return "module level"


def violations(source: str, where: str) -> list[str]:
    """Each use of the database in a route module's ``source``, in line order."""
    tree = ast.parse(source)
    names = imported_names(tree)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in OPENERS
        ):
            what = f"opens {ast.unparse(node.func)}()"
        elif isinstance(node, ast.Name | ast.Attribute) and not isinstance(
            parents.get(node), ast.Attribute
        ):
            path_of = dotted(node, names)
            if path_of is None or not touches_data(resolve(path_of)):
                continue
            what = f"uses {path_of}"
        else:
            continue
        found.append((node.lineno, f"{where}:{node.lineno} {enclosing(node, parents)} {what}"))
    return [line for _, line in sorted(found)]


@pytest.mark.parametrize("service", SERVICES)
def test_no_route_module_opens_a_connection_or_calls_a_store(service: str) -> None:
    modules = list(route_modules(service))
    assert modules, f"no route modules found under {service}/"
    found = [
        line
        for path in modules
        for line in violations(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    ]
    assert not found, (
        "a route handler parses, calls one service function and serializes: move this"
        " into the package's service.py, which opens the connection or transaction"
        " (taking the Context first) and calls the store:\n" + "\n".join(found)
    )


# A new package's route module that breaks the rule three ways and keeps to it once.
PROBE = """\
from content.entries.store import SORTS, EntryFilters
from content.types import store
from content.writes import write


async def list_things(request):
    ctx = request.app["ctx"]
    filters = EntryFilters(type=None, status=None, author=None, locale=None, search=None, term=None)
    async with ctx.db.connection() as conn:
        return await store.list_types(conn), SORTS, filters


async def change_thing(request, ctx):
    async with write(ctx) as tx:
        return tx
"""


def test_the_failure_names_the_handler_and_what_it_did() -> None:
    """Whoever adds a route reads which handler broke the rule, and how."""
    assert violations(PROBE, "content/social/routes.py") == [
        "content/social/routes.py:9 list_things() opens ctx.db.connection()",
        "content/social/routes.py:10 list_things() uses content.types.store.list_types",
        "content/social/routes.py:14 change_thing() uses content.writes.write",
    ]
