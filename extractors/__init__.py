"""docassay: extractors."""
