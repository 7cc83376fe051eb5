"""docassay: rules."""
