"""The inline catalog read model: projector, queries, migrations and the warehouse cache."""
