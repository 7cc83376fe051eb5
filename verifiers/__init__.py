"""docassay: verifiers."""
