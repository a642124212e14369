"""The processes around the API: embedded PostgreSQL and NATS, database start-up, the ASGI server."""
