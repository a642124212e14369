"""PostgreSQL: the event log, its migrations and the side tables kept out of it."""
