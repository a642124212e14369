"""The management API (`/management/v1`): audit history and the catalog as of a past time."""
