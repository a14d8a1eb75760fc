"""POP3 (RFC 1939) with STLS (RFC 2595), SASL PLAIN (RFC 5034) and CAPA (RFC 2449).

``parser.py`` reads a command line and writes the replies, ``maildrop.py``
is the store adapter (the Inbox as a numbered list, the raw messages, the
expunge at QUIT), ``session.py`` the state machine (AUTHORIZATION,
TRANSACTION, UPDATE), ``server.py`` the listeners on POP3_PORT (STLS) and
POP3S_PORT (implicit TLS).
"""
