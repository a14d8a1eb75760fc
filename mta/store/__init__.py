"""All of the mta schema's SQL: one module per table group, connection first."""
