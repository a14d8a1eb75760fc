"""Content webhooks: signed deliveries of entry events to other systems, on the job queue."""
