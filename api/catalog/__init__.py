"""The Iceberg REST catalog routes, under /catalog/v1."""
