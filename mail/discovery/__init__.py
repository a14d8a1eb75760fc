"""What mail clients discover: client-config, autoconfig, autodiscover, MTA-STS."""
