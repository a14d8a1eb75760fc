"""Plugins: the interface a plugin implements, re-exported for plugin authors."""

from content.design.surfaces import Property, Surface
from content.plugins.interface import (
    Hook,
    HookEvent,
    Plugin,
    PluginContext,
    Route,
    RouteHandler,
    Setting,
)

__all__ = [
    "Hook",
    "HookEvent",
    "Plugin",
    "PluginContext",
    "Property",
    "Route",
    "RouteHandler",
    "Setting",
    "Surface",
]
