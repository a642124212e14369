"""Maintenance read models (issue 22): declared policies (inline) and per-table health (projector process)."""
