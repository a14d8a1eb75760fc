"""The assistant: one connected model provider behind the field assistant, the
conversations (tools as proposals) and the visitor bubble (content/assistant/README.md)."""
