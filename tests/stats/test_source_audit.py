"""Claim 004, part 2: the source-line audit (files made in tmp_path)."""

from __future__ import annotations

import pytest

from harness.authors.audit import audit_entry, audit_source_lines

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture
def checkout(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "opt.py").write_text(
        "import numpy as np\n"
        "\n"
        "DEFAULT_LAMBDA: float = 1e-3\n"
        "def fit(tau: float = 0.98, kappa: float = 50.0):\n"
        "    return np.mean(loss) + lam * (b**2)\n",
        encoding="utf-8",
    )
    return tmp_path


ENTRIES = [
    {"file": "pkg/opt.py", "line": 3, "expect": "DEFAULT_LAMBDA: float = 1e-3", "constant": "lambda = 1e-3"},
    {"file": "pkg/opt.py", "line": 4, "expect": "tau: float = 0.98", "constant": "tau = 0.98"},
    {
        "file": "pkg/opt.py",
        "line": 5,
        "expect": r"np\.mean\(.*\(b\*\*2\)",
        "match": "regex",
        "constant": "mean + ridge",
    },
]


def test_all_entries_found(checkout):
    res = audit_source_lines(checkout, ENTRIES)
    # Each expected string is on its cited (1-based) line.
    assert res["all_found"] and res["n_found"] == 3
    first = res["entries"][0]
    assert first["text"] == "DEFAULT_LAMBDA: float = 1e-3"
    assert first["reason"] is None and first["constant"] == "lambda = 1e-3"


def test_changed_expected_value_fails_only_that_entry(checkout):
    entries = [dict(e) for e in ENTRIES]
    entries[0]["expect"] = "DEFAULT_LAMBDA: float = 1e-2"
    res = audit_source_lines(checkout, entries)
    # The claim says 1e-2, the file says 1e-3: that entry fails, the others still pass.
    assert [e["found"] for e in res["entries"]] == [False, True, True]
    assert not res["all_found"]
    assert "does not contain" in res["entries"][0]["reason"]
    # The line is still shown, so a report can print what is really there.
    assert res["entries"][0]["text"] == "DEFAULT_LAMBDA: float = 1e-3"


def test_off_by_one_line_fails(checkout):
    # Line numbers are 1-based: the constant is on line 3, not line 2 (blank).
    res = audit_entry(checkout, {**ENTRIES[0], "line": 2})
    assert not res["found"] and res["text"] == ""


def test_missing_file_is_a_failed_entry_not_an_exception(checkout):
    res = audit_entry(checkout, {**ENTRIES[0], "file": "pkg/absent.py"})
    assert not res["found"] and res["text"] is None
    assert "does not exist" in res["reason"]


def test_line_past_the_end_is_a_failed_entry(checkout):
    res = audit_entry(checkout, {**ENTRIES[0], "line": 6})
    # The file has 5 lines.
    assert not res["found"] and "past the end" in res["reason"]


def test_an_invalid_regex_is_reported(checkout):
    bad_re = audit_entry(checkout, {**ENTRIES[2], "expect": "np.mean("})
    assert not bad_re["found"] and "invalid regex" in bad_re["reason"]


def test_substring_match_is_literal(checkout):
    # In substring mode regex metacharacters are plain text: "1e.3" is not "1e-3".
    assert not audit_entry(checkout, {**ENTRIES[0], "expect": "1e.3"})["found"]


def test_path_outside_the_checkout_is_refused(checkout, tmp_path_factory):
    outside = tmp_path_factory.mktemp("other") / "x.py"
    outside.write_text("DEFAULT_LAMBDA: float = 1e-3\n", encoding="utf-8")
    res = audit_entry(checkout, {**ENTRIES[0], "file": str(outside), "line": 1})
    assert not res["found"] and "outside the checkout" in res["reason"]
