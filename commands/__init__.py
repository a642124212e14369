"""Command handlers: one per use case, load state, decide, write metadata, append events atomically."""
