"""JMAP Email semantics (RFC 8621 4, 5): Email/get, /changes, /query,
/queryChanges, /set, /copy, /import, /parse and SearchSnippet/get, as plain
async functions over a connection, for the JMAP server and webmail alike."""

from mta.jmap.email import methods as methods  # registers the methods
