"""The example host of the CMS: a small website whose pages come from delivery.

``make run`` serves it under /site in development (gateway/app.py), with its
content created on the first run. Read docs/content.md, "Host API", first.
"""

from example_site.app import create_site, first_run
from example_site.model import OPTIONS

__all__ = ["OPTIONS", "create_site", "first_run"]
