"""All of the mta schema's SQL: one module per table or record, connection first.

No module outside this package names an mta table in SQL, and each table is
written by one module of it (tests/test_boundaries.py holds both); rows
leave as common.records.Record dataclasses, for JMAP, delivery, mail's
facade and the IMAP server alike.
"""
