"""docassay: extractors/instructions."""
