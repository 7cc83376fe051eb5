"""docassay: verifiers — hard gates, tolerance scoring and diagnostics.

    verify(VerifyContext) -> Verification          verifiers.verify
        .passed          every hard gate passed (and the score reaches min_score, 0 by default)
        .gates           name -> GateResult(passed, details, violations): format, coverage,
                         completeness, evidence, rules, stale, consistency, lifecycle
        .score           in [0, 1]; .components per field (verifiers.score says what it compares)
        .violations      each names gate, rule, field, expected, actual and the alternatives the
                         document offers; .failing_fields / .n_errors drive the fixer and the
                         troubleshooter; .repairable is False when only a duplicate or the
                         format's lifecycle blocks
    gates.reference.check(golden cases, current replayer, proposed replayer, settings)
                         no new failures on a format's golden set before a version is stored
    VerifySettings.from_schema(schema)               named tolerances, weights and gate policies
                                                     from `x-docassay` keywords (verifiers.settings)

Verifiers never import the extractors: the pipeline hands over the evidence behind each value
(verifiers.evidence.FieldEvidence), the parsed document, and a History of accepted documents.
"""
