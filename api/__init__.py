"""The edges: Litestar HTTP app, settings, embedded runtime and the catalog-es CLI."""
