"""catalog-es domain: identifiers, events, Iceberg metadata decisions, the event store and storage IO."""
