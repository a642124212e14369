"""Pure Iceberg metadata decisions for tables and views (no IO)."""
