"""The front end's built bundles (frontend/, `make assets`), served by the services.

esbuild writes ``frontend/dist/`` with fingerprinted names
(``cms/entries-3FQ2XK.js``) and ``manifest.json``: ``entries`` maps a screen's
stable name (``cms/entries.js``) to its current file, ``files`` lists every
file the build made (shared chunks and source maps included). A page links
the fingerprinted file, which is served cached for a year as immutable: a new
build has new names, so nobody ever runs a stale screen. Only files the
manifest lists are served; nothing comes from another origin.

The manifest is re-read when its modification time moves, so `make dev`
picks up a rebuild without a restart.
"""

from __future__ import annotations

import json
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "frontend" / "dist"
IMMUTABLE = "public, max-age=31536000, immutable"
TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".map": "application/json",
    ".txt": "text/plain",
    ".woff2": "font/woff2",
    ".svg": "image/svg+xml",
}


class NotBuilt(RuntimeError):
    """The bundles are missing: `make assets` has not run."""


@dataclass
class Bundles:
    dist: Path = DIST
    _stamp: float = -1.0
    _entries: dict[str, str] = field(default_factory=dict)
    _files: frozenset[str] = frozenset()

    def _refresh(self) -> None:
        manifest = self.dist / "manifest.json"
        try:
            stamp = manifest.stat().st_mtime
        except FileNotFoundError:
            raise NotBuilt(f"{manifest} is missing: run `make assets`") from None
        if stamp != self._stamp:
            data = json.loads(manifest.read_text())
            self._entries = dict(data["entries"])
            self._files = frozenset(data["files"])
            self._stamp = stamp

    def file_of(self, entry: str) -> str:
        """The fingerprinted file of an entry point (``cms/entries.js``)."""
        self._refresh()
        try:
            return self._entries[entry]
        except KeyError:
            raise NotBuilt(f"no entry point {entry!r} in the bundles: run `make assets`") from None

    def has(self, entry: str) -> bool:
        self._refresh()
        return entry in self._entries

    def respond(self, name: str) -> web.StreamResponse:
        """One built file, immutable; anything the build did not make is 404."""
        try:
            self._refresh()
        except NotBuilt:
            raise web.HTTPNotFound(text="no such file") from None
        if name not in self._files:
            raise web.HTTPNotFound(text="no such file")
        path = self.dist / name
        kind = TYPES.get(path.suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
        return web.FileResponse(
            path,
            headers={
                "Content-Type": kind,
                "Cache-Control": IMMUTABLE,
                "X-Content-Type-Options": "nosniff",
                # build.mjs writes .br and .gz beside each script and sheet;
                # FileResponse sends one when the browser accepts it.
                "Vary": "Accept-Encoding",
            },
        )


BUNDLES = Bundles()
