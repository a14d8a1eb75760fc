"""A sample plugin that fails at load: its import raises."""

from __future__ import annotations

raise ValueError("broken on purpose")
