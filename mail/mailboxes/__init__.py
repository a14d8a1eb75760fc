"""Folders and recent mail activity of an address, as the panel shows them."""
