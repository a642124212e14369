"""Read models built from the event log, their queries, and the CloudEvents mapping."""
