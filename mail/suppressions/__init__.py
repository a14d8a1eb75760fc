"""The account's suppression list as the panel manages it (stored by mta)."""
