"""Routes outside /api that clients and researchers look for at the host root."""
