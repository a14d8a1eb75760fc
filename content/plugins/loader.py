"""Finding plugins: scanning PLUGIN_DIR, importing each, checking its declaration.

Every failure is kept, never raised: a plugin whose module raises on import,
has no ``plugin``, or declares something wrong (an unknown setting type, a
default of the wrong type, a hook on an unknown event, a bad route or design
surface) becomes a :class:`LoadFailure`, recorded on its record and logged,
while every other plugin loads and the service starts (WordPress, not
Directus, which stops).
"""

from __future__ import annotations

import importlib.util
import logging
import math
import sys
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from content.auth.permissions import PERMISSIONS
from content.design.surfaces import DeclarationError, Surface, check_surfaces
from content.plugins.interface import (
    NAME_RE,
    ROUTE_METHODS,
    ROUTE_PATH_RE,
    SETTING_KEY_RE,
    SETTING_TYPES,
    Plugin,
    Setting,
)
from content.types.fields import COLOR_RE

log = logging.getLogger(__name__)

# The module name a plugin is imported under: its own namespace, never a
# project module's.
MODULE_PREFIX = "cms_plugin_"


@dataclass(frozen=True)
class Loaded:
    plugin: Plugin
    # Its design surfaces, checked, ids prefixed with the plugin's name.
    surfaces: Sequence[Surface]


@dataclass(frozen=True)
class LoadFailure:
    name: str
    error: str


def check_setting(setting: Setting, value: Any) -> tuple[Any, str | None]:
    """(clean value, None) or (None, why ``value`` is refused) for a declared setting."""
    kind = setting.type
    if kind == "boolean":
        return (value, None) if isinstance(value, bool) else (None, "must be true or false")
    if kind in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None, f"must be {'a whole number' if kind == 'integer' else 'a number'}"
        if kind == "integer" and not (isinstance(value, int) or float(value).is_integer()):
            return None, "must be a whole number"
        if not math.isfinite(value):
            return None, "must be a finite number"
        if setting.minimum is not None and value < setting.minimum:
            return None, f"must be at least {setting.minimum:g}"
        if setting.maximum is not None and value > setting.maximum:
            return None, f"must be at most {setting.maximum:g}"
        return (int(value) if kind == "integer" else value), None
    if not isinstance(value, str):
        return None, "must be a string"
    if kind == "select":
        if value not in setting.options:
            return None, f"must be one of {', '.join(setting.options)}"
    elif kind == "color":
        if not COLOR_RE.match(value):
            return None, "must be a hex colour such as #1a2b3c"
        value = value.lower()
    elif len(value) > setting.max_length:
        return None, f"must be at most {setting.max_length} characters"
    return value, None


def _check_settings(settings: Iterable[Setting]) -> None:
    seen: set[str] = set()
    for s in settings:
        if not isinstance(s, Setting):
            raise DeclarationError("settings are content.plugins.Setting")
        if not isinstance(s.key, str) or not SETTING_KEY_RE.match(s.key) or s.key in seen:
            raise DeclarationError(f"setting {s.key!r} is not a unique camelCase key")
        seen.add(s.key)
        if s.type not in SETTING_TYPES:
            raise DeclarationError(
                f"setting {s.key!r} has type {s.type!r}; types are {', '.join(SETTING_TYPES)}"
            )
        if s.type == "select" and not s.options:
            raise DeclarationError(f"setting {s.key!r} is a select without options")
        if s.default is not None:
            _, problem = check_setting(s, s.default)
            if problem is not None:
                raise DeclarationError(f"the default of setting {s.key!r} {problem}")


def check_plugin(plugin: object, hook_events: Sequence[str]) -> Loaded:
    """The plugin as declared, or DeclarationError saying what is wrong."""
    if not isinstance(plugin, Plugin):
        raise DeclarationError("`plugin` must be a content.plugins.Plugin")
    if not isinstance(plugin.name, str) or not NAME_RE.match(plugin.name):
        raise DeclarationError(f"the name {plugin.name!r} must match {NAME_RE.pattern}")
    if not isinstance(plugin.version, str) or not plugin.version.strip():
        raise DeclarationError("a plugin declares its version")
    _check_settings(plugin.settings)
    for event, hook in plugin.hooks.items():
        if event not in hook_events:
            raise DeclarationError(f"hook on {event!r}: hooks are on {', '.join(hook_events)}")
        if not callable(hook):
            raise DeclarationError(f"the hook on {event!r} is not callable")
    routes: set[tuple[str, str]] = set()
    for route in plugin.routes:
        where = f"route {route.method} {route.path!r}"
        if route.method not in ROUTE_METHODS:
            raise DeclarationError(f"{where}: methods are {', '.join(ROUTE_METHODS)}")
        if not ROUTE_PATH_RE.match(route.path):
            raise DeclarationError(f"{where}: the path is /segments, {{name}} for a parameter")
        if (route.method, route.path) in routes:
            raise DeclarationError(f"{where} is declared twice")
        routes.add((route.method, route.path))
        if route.permission is not None and route.permission not in PERMISSIONS:
            raise DeclarationError(f"{where}: {route.permission!r} is not a permission")
        if not callable(route.handler):
            raise DeclarationError(f"{where}: the handler is not callable")
    return Loaded(plugin, check_surfaces(plugin.surfaces, source=plugin.name))


def _candidates(directory: Path) -> list[tuple[str, Path, bool]]:
    """(plugin name, file, is a package) for each module or package in the directory."""
    found = []
    for path in sorted(directory.iterdir()):
        if path.name.startswith((".", "_")):
            continue
        if path.is_dir() and (path / "__init__.py").is_file():
            found.append((path.name.replace("_", "-"), path / "__init__.py", True))
        elif path.is_file() and path.suffix == ".py":
            found.append((path.stem.replace("_", "-"), path, False))
    return found


def _import(name: str, path: Path, package: bool) -> object:
    module_name = MODULE_PREFIX + name.replace("-", "_")
    spec = importlib.util.spec_from_file_location(
        module_name, path, submodule_search_locations=[str(path.parent)] if package else None
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    if not hasattr(module, "plugin"):
        raise DeclarationError("the module has no `plugin` (a content.plugins.Plugin)")
    return module.plugin


def _failure(name: str, exc: BaseException) -> LoadFailure:
    if isinstance(exc, DeclarationError):
        text = str(exc)
    else:
        last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        at = f" ({Path(last[0].filename).name}, line {last[0].lineno})" if last else ""
        text = f"{type(exc).__name__}: {exc}{at}"
    log.error("plugin %s failed to load: %s", name, text)
    return LoadFailure(name, text[:2000])


def load_plugins(
    directory: Path | None, given: Sequence[Plugin], hook_events: Sequence[str]
) -> tuple[dict[str, Loaded], dict[str, LoadFailure]]:
    """The plugins the host passed and those in ``directory``, and those that failed."""
    loaded: dict[str, Loaded] = {}
    failed: dict[str, LoadFailure] = {}

    def add(expected: str | None, plugin: object) -> None:
        checked = check_plugin(plugin, hook_events)
        name = checked.plugin.name
        if expected is not None and name != expected:
            raise DeclarationError(
                f"the plugin in {expected!r} must be named {expected!r}, not {name!r}"
            )
        if name in loaded:
            raise DeclarationError(f"a plugin named {name!r} is already loaded")
        loaded[name] = checked

    for plugin in given:
        try:
            add(None, plugin)
        except DeclarationError as exc:
            name = getattr(plugin, "name", "")
            failed[str(name) or "unnamed"] = _failure(str(name) or "unnamed", exc)
    if directory is not None:
        if not directory.is_dir():
            log.error("PLUGIN_DIR %s is not a directory; no plugins scanned", directory)
            return loaded, failed
        for name, path, package in _candidates(directory):
            try:
                add(name, _import(name, path, package))
            # A plugin's import is its own code: whatever it raises (SystemExit
            # included) is its failure, not the service's.
            except (Exception, SystemExit) as exc:
                failed[name] = _failure(name, exc)
    return loaded, failed
