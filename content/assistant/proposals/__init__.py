"""The assistant's proposals: records, review routes and apply (issue 28)."""
