"""Calibrated per-field confidence: how much to believe each value, and whether a record may pass
without a person looking.

    features.field_bases(ctx, gates, signals)   what speaks for and against each value
    calibrator.Calibrator                       per field family, a probability the value is right
                                                (weights.json ships; `python -m bench.calibrate`
                                                trains it; CARD.md has its data and calibration)
    decision.assess                             verified | doubtful | missing at the policy's target
    metrics.ece / reliability                   calibration figures
"""
from docassay.verifiers.confidence.calibrator import Calibrator, Example, load, load_default
from docassay.verifiers.confidence.decision import DEFAULT_MIN_CONFIDENCE, ConfidencePolicy, FieldConfidence, assess
from docassay.verifiers.confidence.families import FAMILIES, family_of
from docassay.verifiers.confidence.features import FieldBasis, field_bases
from docassay.verifiers.confidence.metrics import ece, reliability

__all__ = ["Calibrator", "Example", "load", "load_default", "DEFAULT_MIN_CONFIDENCE", "ConfidencePolicy",
           "FieldConfidence", "assess", "FAMILIES", "family_of", "FieldBasis",
           "field_bases", "ece", "reliability"]
