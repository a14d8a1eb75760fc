"""The SMTP inbound daemon: aiosmtpd's protocol, our handler hooks, one module per stage."""
