"""The assistant's forty-five tools (content/assistant/tools/README.md)."""

from content.assistant.tools.registry import REGISTRY

TOOLBOX = REGISTRY

__all__ = ["TOOLBOX"]
