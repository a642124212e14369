"""The Spark maintenance queue: its handler (job.py), run by the one task runner, and its scheduler step."""
