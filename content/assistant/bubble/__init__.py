"""The visitor bubble: questions answered from published content, with sources."""
