"""ManageSieve (RFC 5804): mail clients manage the address's Sieve filters.

``parser.py`` reads commands (atoms, quoted strings, literals) and writes
responses, ``scripts.py`` maps scripts onto the panel's filters
(mta/store/filters.py, compiled by mta/sieve/compiler.py), ``session.py``
is the state machine, ``server.py`` the listener on SIEVE_PORT (STARTTLS).
"""
