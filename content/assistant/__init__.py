"""The CMS assistant (issue 28)."""
