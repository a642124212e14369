"""Reads of the log for people: history, change summaries, the catalog as of a past time."""
