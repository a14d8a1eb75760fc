"""Importing the modules whose ``register(...)`` calls fill the method registry."""

from __future__ import annotations

import importlib
import importlib.util

# Each registers its methods when imported. Email's package (mta/jmap/email/)
# registers Email/*, SearchSnippet/* from its __init__.py.
MODULES = (
    "mta.jmap.core",
    "mta.jmap.blobs",
    "mta.jmap.mailbox",
    "mta.jmap.thread",
    "mta.jmap.identity",
    "mta.jmap.vacation",
    "mta.jmap.push",
    "mta.jmap.email",
)


def load_methods() -> None:
    for name in MODULES:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)
