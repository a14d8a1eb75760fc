"""mail's handlers parse, call one service function and serialize (mail/README.md).

So no module named routes.py opens a connection or a transaction: the
service that owns the work does, in the shape of content/entries/service.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

MAIL = Path(__file__).resolve().parent.parent.parent / "mail"


def test_no_mail_route_module_opens_a_connection_or_a_transaction() -> None:
    found = []
    for path in sorted(MAIL.rglob("routes.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("connection", "transaction")
            ):
                found.append(f"{path.relative_to(MAIL.parent)}:{node.lineno} .{node.func.attr}()")
    assert not found, "move the work into the package's service.py:\n" + "\n".join(found)
