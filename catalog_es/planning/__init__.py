"""Server-side scan planning: pyiceberg's own pruning run in the catalog, its tasks in the REST spec's JSON."""
