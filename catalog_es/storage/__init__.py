"""Warehouse storage: profiles and layouts (pure), S3 and file IO, outbound policy."""
