"""docassay: infra."""
