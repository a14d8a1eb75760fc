"""Mail the panel sends itself, kept as full MIME messages for the MTA to deliver."""
