"""docassay: flows."""
