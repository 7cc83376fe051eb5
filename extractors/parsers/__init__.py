"""docassay: extractors/parsers."""
