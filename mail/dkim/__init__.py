"""DKIM keys of hosted domains: generation, sealing at rest, the published record."""
