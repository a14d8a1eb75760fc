"""Sieve filters of the panel: each belongs to one address and runs when its mail arrives."""
