"""Social publishing to nine networks (issue 27); see docs/content.md, "Social publishing"."""
