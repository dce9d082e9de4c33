"""The command line's small courtesies (issue #17 item 10): suggestions said once and for numbers too, help
that names each default once, a header on ``list``, a git error said once with the way out, no nested
parentheses in a result line."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from harness import cli
from harness.authors.checkout import checkout
from harness.build import make
from harness.core.errors import HarnessError, UpstreamError
from harness.core.record import read_record

ROOT = Path(__file__).resolve().parents[2]
STEMS = [p.stem for p in sorted((ROOT / "claims").glob("*.yaml"))]


def _suggested(name: str) -> list[str]:
    with pytest.raises(HarnessError) as info:
        cli.resolve_claims([name])
    msg = str(info.value)
    said = msg.split("did you mean ", 1)[1].split("?", 1)[0] if "did you mean" in msg else ""
    return re.findall(r"'([^']+)'", said)


def _number(stem: str) -> str:
    return stem.split("_", 1)[0]


def test_a_near_miss_suggests_each_claim_once():
    for stem in STEMS:
        near = _number(stem)[1:]  # "02" for "002"
        if any(s.startswith(near + "_") or s == near for s in STEMS):
            continue
        said = _suggested(near)
        assert said and len(said) == len(set(said)), said
        assert all(s in STEMS for s in said)


def test_a_number_with_no_claim_suggests_the_nearest_numbers():
    """Every number no claim has, up to 20 past the last (``011`` with ``001`` and ``006`` present, which are
    spelt alike): the claim whose number is nearest comes first."""
    numbers = {int(_number(s)): s for s in STEMS if _number(s).isdigit()}
    for n in range(max(numbers) + 1, max(numbers) + 21):
        said = _suggested(f"{n:03d}")
        nearest = min(numbers, key=lambda k: (abs(k - n), k))
        assert said and said[0] == numbers[nearest], (n, said)


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield sub
                yield from _subparsers(sub)


def test_help_names_each_default_once_and_never_none():
    parser = cli.build_parser()
    for p in [parser, *_subparsers(parser)]:
        text = " ".join(p.format_help().split())
        assert "(default: None)" not in text and "(default: False)" not in text, p.prog
        for chunk in re.split(r"\s(?=-{1,2}\w)", text):  # one option's help
            assert chunk.lower().count("default") <= 1, (p.prog, chunk)
        assert str(ROOT) not in text, p.prog  # project paths shown relative to it


def test_list_prints_a_header(sealed_reports, capsys):
    assert cli.main(["list", "--out", str(sealed_reports)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        lines[0].split()[:3] == ["claim", "verdict", "robustness"]
        and len(lines) == len(list(sealed_reports.glob("*.json"))) + 1
    )
    # every column starts where its header does, however long a robustness label ("not assessed (...)") is
    for header in ("verdict", "robustness", "authors' code"):
        col = lines[0].index(header)
        assert all(line[col - 2 : col] == "  " and line[col] != " " for line in lines[1:]), header


def test_a_clone_that_fails_names_the_local_mirror_setting(tmp_path):
    pins = tmp_path / "upstream.yaml"
    url = str(tmp_path / "nowhere")
    pins.write_text(yaml.safe_dump({"p": {"url": url, "commit": "0" * 40, "paths": ["x/"]}}))
    with pytest.raises(UpstreamError) as info:
        checkout("p", tmp_path / "vendor", pins_file=pins)
    msg = str(info.value)
    assert "\n" not in msg and f"url.<mirror>.insteadOf {url}" in msg and "docs/authors-arm.md" in msg


class _Said:
    def __init__(self):
        self.lines = []

    def info(self, m):
        self.lines.append(m)

    note = error = info


def _output(upstream: str, reason: str | None) -> make.ClaimOutput:
    committed = min((ROOT / "reports").glob("*.json"), key=lambda p: p.stat().st_size, default=None)
    if committed is None:
        pytest.skip("no committed records")
    rec = read_record(committed)
    arm = rec.arms.upstream.model_copy(update={"status": upstream, "reason": reason})
    rec = rec.model_copy(update={"arms": rec.arms.model_copy(update={"upstream": arm})})
    return make.ClaimOutput(path=Path(f"{rec.claim.id}.yaml"), record=rec, md="r\n")


def _depth(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        depth += ch == "("
        deepest = max(deepest, depth)
        depth -= ch == ")"
    return deepest


def test_a_result_line_has_no_nested_parentheses(tmp_path):
    said = _Said()
    reason = "the authors' arm was switched off for this run by --no-upstream"
    args = SimpleNamespace(out=str(tmp_path), accept_degraded=False)
    assert make._finish(_output("not run", reason), args, False, said) == make.EXIT_OK
    (line,) = said.lines
    assert reason in line and _depth(line) <= 1, line


def test_a_git_error_is_said_once(tmp_path):
    reason = "could not clone u into vendor/p: fatal: 'u' does not appear to be a git repository"
    out = tmp_path / "reports"
    first = _output("ok", None)
    args = SimpleNamespace(out=str(out), accept_degraded=False)
    assert make._finish(first, args, True, _Said()) == make.EXIT_OK
    assert read_record(out / f"{first.record.claim.id}.json").arms.upstream.status == "ok"  # the report there now
    said = _Said()
    make._finish(_output("could not run", reason), args, True, said)
    assert sum(line.count("does not appear to be a git repository") for line in said.lines) == 1, said.lines


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_record_path_that_is_no_file_is_refused_in_one_line(tmp_path, kind):
    # a record is read as every file a user names is: bounded, a regular file only (a FIFO would block)
    path = tmp_path / "000_x.json"
    path.mkdir() if kind == "folder" else os.mkfifo(path)
    with pytest.raises(HarnessError, match=r"000_x\.json: not a run record: .*(folder|FIFO)"):
        read_record(path)
