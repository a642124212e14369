"""NATS JetStream change events: the relay, its publisher, wire binding and Lakekeeper payloads."""
