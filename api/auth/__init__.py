"""Authentication: OpenID Connect bearer tokens verified against the provider's keys, or anonymous when off."""
