"""What every mailbox-access daemon (IMAP, POP3, ManageSieve) shares.

``listener.py``: the listeners (STARTTLS and implicit-TLS ports), the
connection caps per process and per client address (mta/smtp/limits.py's
``ConnectionLimits``), line reading with a length limit and a deadline, the
STARTTLS upgrade, literals spooled to disk while they arrive, the lingering
close, and the error count that slows and then drops a client.
``signin.py``: a password checked through mail/directory with the failure
budgets JMAP and webmail spend; SMTP submission's AUTH
signs in through it too.
"""
