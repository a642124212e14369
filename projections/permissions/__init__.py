"""The inline permissions read model: projector, queries and the access as of a past time."""
