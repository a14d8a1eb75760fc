"""Design surfaces: declared by the host or a plugin, overridden by admins, delivered to the site."""

from content.design.surfaces import Property, Surface

__all__ = ["Property", "Surface"]
