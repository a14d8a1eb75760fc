"""The realtime socket: tickets, topics, the per-process hub and presence."""
