"""A domain's DNS record set: what to publish, what is published, and publishing it."""
