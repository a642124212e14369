"""Adopting another catalog: the import itself (`catalog.py`), shared by `catalog-es import` and the task queue's
`catalog_import` handler (`task.py`) the management API schedules."""
