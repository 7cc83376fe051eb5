"""A known format's fresh-layout trial on a hybrid is remembered per format version, so later
hybrids of the version that its replay reads as well do not generate again (flows/einvoice.py)."""
from types import SimpleNamespace

from docassay.flows.einvoice import FRESH_LAYOUT_TRIED, covers, fresh_layout_tried


def _version(meta):
    return SimpleNamespace(meta=meta)


def test_no_trial_recorded_settles_nothing():
    assert fresh_layout_tried(None) is None
    assert fresh_layout_tried(_version({})) is None
    assert fresh_layout_tried(_version({FRESH_LAYOUT_TRIED: "garbage"})) is None
    assert not covers(None, 9, 10)


def test_a_replay_that_reads_as_much_is_settled_one_that_reads_less_is_tried_again():
    tried = fresh_layout_tried(_version({FRESH_LAYOUT_TRIED: {"replay_right": 8.5, "replay_total": 10}}))
    assert covers(tried, 8.5, 10)
    assert covers(tried, 9, 10)
    assert covers(tried, 17, 20)          # the same share of a larger XML
    assert not covers(tried, 8, 10)       # this document's replay reads less: a fresh layout may read more
    assert not covers(tried, 0, 0)        # nothing to compare


def test_a_malformed_record_settles_nothing():
    for bad in ({"replay_right": "x", "replay_total": 10}, {"replay_right": 1, "replay_total": 0}, {"replay_total": 3}):
        assert not covers(bad, 5, 5)
