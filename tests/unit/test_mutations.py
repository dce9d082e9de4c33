"""Mutation test of claim files: well over 250 bad files, generated from the five claims, each refused by
``validate`` and by ``run`` with a clear error (exit 2, one line naming the file and the key, no traceback,
in under 5 s), and nothing outside ``--out`` changed.

Three kinds of mutation: of the parsed claim (then written out with ``yaml.safe_dump``; :func:`_plain`
puts text into the file exactly as given, unquoted), of the file's text, and of what is at the path (a
FIFO, a device, an oversized file).
"""

import contextlib
import copy
import functools
import hashlib
import os
import signal
from pathlib import Path

import pytest
import yaml

from harness import cli

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = sorted((ROOT / "claims").glob("*.yaml"))


def _set(path):
    def apply(raw, value):
        node = raw
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value

    return apply


_PLAIN: dict[str, str] = {}


def _plain(text: str) -> str:
    """A value written into the file exactly as ``text`` (unquoted YAML), whatever safe_dump would make of it."""
    mark = f"@@plain{len(_PLAIN)}@@"
    _PLAIN[mark] = text
    return mark


def _unplain(text: str) -> str:
    for mark, raw in _PLAIN.items():
        text = text.replace(f"'{mark}'", raw).replace(mark, raw)
    return text


def _delete(path):
    def apply(raw, _):
        node = raw
        for k in path[:-1]:
            node = node[k]
        del node[path[-1]]

    return apply


# (name, how to change the raw claim, value, the key the message must name)
MUTATIONS = [
    ("no id", _delete(("id",)), None, "id"),
    ("no claim", _delete(("claim",)), None, "claim"),
    ("no protocol", _delete(("protocol",)), None, "protocol"),
    ("no inputs", _delete(("inputs",)), None, "inputs"),
    ("no seed", _delete(("seed",)), None, "seed"),
    ("no targets", _delete(("targets",)), None, "targets"),
    ("seed a string", _set(("seed",)), "zero", "seed"),
    ("seed a boolean", _set(("seed",)), True, "seed"),
    ("seed negative", _set(("seed",)), -1, "seed"),
    ("seed a float", _set(("seed",)), 1.5, "seed"),
    ("unknown top-level key", _set(("tolerances",)), 1, "tolerances"),
    ("unknown protocol", _set(("protocol",)), "boundary_at_budgte", "protocol"),
    ("input not in the lock", _set(("inputs",)), ["olll"], "inputs[0]"),
    ("empty inputs", _set(("inputs",)), [], "inputs"),
    ("unknown pin", _set(("upstream",)), "prescriptive-scalin", "upstream"),
    ("id not the file name", _set(("id",)), "another_claim", "id"),
    ("id with a slash", _set(("id",)), "../escape", "id"),
    ("id of 300 characters", _set(("id",)), "a" * 300, "id"),
    (
        "target quantity typo",
        lambda raw, _: raw["targets"][0].update(quantity=raw["targets"][0]["quantity"] + "x"),
        None,
        "targets[0].quantity",
    ),
    ("target without reason", lambda raw, _: raw["targets"][0].pop("reason"), None, "targets[0].reason"),
    (
        "negative tolerance",
        lambda raw, _: raw["targets"][0].update(relation="~", paper=1.0, tolerance=-1, value=None),
        None,
        "targets[0]",
    ),
    (
        "tolerance a string",
        lambda raw, _: raw["targets"][0].update(relation="~", paper=1.0, tolerance="small", value=None),
        None,
        "targets[0]",
    ),
    ("unknown relation", lambda raw, _: raw["targets"][0].update(relation="≈"), None, "targets[0].relation"),
    (
        "relation without a right side",
        lambda raw, _: raw["targets"][0].update(relation=">", value=None, other=None, paper=None, tolerance=None),
        None,
        "targets[0]",
    ),
    (
        "target value nan",
        lambda raw, _: raw["targets"][0].update(
            relation=">", value=float("nan"), paper=None, tolerance=None, other=None
        ),
        None,
        "targets[0].value",
    ),
    (
        "target value infinite",
        lambda raw, _: raw["targets"][0].update(
            relation=">", value=float("inf"), paper=None, tolerance=None, other=None
        ),
        None,
        "targets[0].value",
    ),
    ("label with a newline", lambda raw, _: raw["targets"][0].update(label="a\n# heading"), None, "targets[0].label"),
    ("label with a tab", lambda raw, _: raw["targets"][0].update(label="a\tb"), None, "targets[0].label"),
    ("unknown target key", lambda raw, _: raw["targets"][0].update(tolerence=1), None, "targets[0].tolerence"),
    ("bad role", lambda raw, _: raw["targets"][0].update(role="main"), None, "targets[0].role"),
    (
        "duplicated target label",
        lambda raw, _: [t.update(label="one row") for t in raw["targets"][:2]],
        None,
        "targets[1].label",
    ),
    ("title of 81 characters", _set(("title",)), "x" * 81, "title"),
    ("unknown params key", lambda raw, _: raw["params"].update(kapa=3), None, "params.kapa"),
    ("params not a mapping", _set(("params",)), [1, 2], "params"),
    (
        "control kind typo",
        lambda raw, _: raw["controls"][0].update(control=raw["controls"][0]["control"] + "x"),
        None,
        "controls[0].control",
    ),
    (
        "control without expectation",
        lambda raw, _: raw["controls"][0].update(must=[], must_fail_targets=False),
        None,
        "controls[0]",
    ),
    (
        "control condition on a typo",
        lambda raw, _: raw["controls"][0]["must"][0]["quantities"].__setitem__(0, "nothing.like.it"),
        None,
        "controls[0].must[0].quantities[0]",
    ),
    (
        "control threshold nan",
        lambda raw, _: raw["controls"][0]["must"][0].update(value=float("nan")),
        None,
        "controls[0].must[0].value",
    ),
    (
        "control threshold a boolean",
        lambda raw, _: raw["controls"][0]["must"][0].update(value=True),
        None,
        "controls[0].must[0].value",
    ),
    (
        "control measure typo",
        lambda raw, _: raw["controls"][0]["must"][0].update(measure="shiftt"),
        None,
        "controls[0].must[0].measure",
    ),
    ("control id with capitals", lambda raw, _: raw["controls"][0].update(id="Median Fit"), None, "controls[0].id"),
    (
        "duplicate control ids",
        lambda raw, _: raw["controls"].append(copy.deepcopy(raw["controls"][0])),
        None,
        "controls",
    ),
    (
        "unknown control param",
        lambda raw, _: raw["controls"][0]["params"].update(bogus=1),
        None,
        "controls[0].params.bogus",
    ),
    (
        "bootstrap without seed",
        lambda raw, _: raw.setdefault("bootstrap", {"n_resamples": 100, "cluster_col": "x"}).pop("seed", None),
        None,
        "bootstrap",
    ),
    # -- silent coercion (issue 10): a quoted number or a string boolean is text, not a number or a boolean
    ("seed quoted", _set(("seed",)), "20250206", "seed"),
    ("seed of 5000 digits", _set(("seed",)), _plain("9" * 5000), "seed"),
    ("tolerance quoted", lambda raw, _: raw["targets"][0].update(tolerance="0.0005"), None, "targets[0].tolerance"),
    ("paper quoted", lambda raw, _: raw["targets"][0].update(paper="0.828"), None, "targets[0].paper"),
    ("value quoted", lambda raw, _: raw["targets"][0].update(value="0.5"), None, "targets[0].value"),
    ("figures yes", _set(("figures",)), "yes", "figures"),
    ("figures plain yes", _set(("figures",)), _plain("yes"), "figures"),
    ("figures plain on", _set(("figures",)), _plain("on"), "figures"),
    (
        "must_fail_targets quoted false",
        lambda raw, _: raw["controls"][0].update(must_fail_targets="false"),
        None,
        "controls[0].must_fail_targets",
    ),
    (
        "control threshold quoted",
        lambda raw, _: raw["controls"][0]["must"][0].update(value="0.05"),
        None,
        "controls[0].must[0].value",
    ),
    ("n_resamples quoted", lambda raw, _: raw["bootstrap"].update(n_resamples="200"), None, "bootstrap.n_resamples"),
    ("seed binary", _set(("seed",)), _plain("!!binary aGVsbG8="), "seed"),
    ("inputs a set", _set(("inputs",)), _plain("!!set {oll: null}"), "inputs"),
    ("seed python tag", _set(("seed",)), _plain("!!python/object/apply:os.getpid []"), "seed"),
    ("params numeric quoted", lambda raw, _: raw["params"].update(n_bins="10"), None, "params.n_bins"),
    ("params boolean quoted", lambda raw, _: raw["params"].update(warm_start="false"), None, "params.warm_start"),
    # -- YAML 1.1 forms (issue 11): read as YAML 1.2, they are text and refused where a number is expected
    ("paper sexagesimal", lambda raw, _: raw["targets"][0].update(paper=_plain("1:30")), None, "targets[0].paper"),
    ("paper octal", lambda raw, _: raw["targets"][0].update(paper=_plain("0132")), None, "targets[0].paper"),
    ("paper underscore", lambda raw, _: raw["targets"][0].update(paper=_plain("0.8_28")), None, "targets[0].paper"),
    ("paper hex", lambda raw, _: raw["targets"][0].update(paper=_plain("0x1F")), None, "targets[0].paper"),
    ("seed sexagesimal", _set(("seed",)), _plain("3:25:45"), "seed"),
    (
        "control threshold octal",
        lambda raw, _: raw["controls"][0]["must"][0].update(value=_plain("010")),
        None,
        "controls[0].must[0].value",
    ),
    ("merge key at the top", _set(("<<",)), {"figures": False}, "<<"),
    ("merge key in a target", lambda raw, _: raw["targets"][0].update({"<<": {"tolerance": 5}}), None, "targets[0].<<"),
    ("key not text", lambda raw, _: raw["params"].update({_plain("7"): 1}), None, "params"),
    # -- text that would reach the report raw (issue 12)
    ("label with escape", lambda raw, _: raw["targets"][0].update(label="a\x1b[31mred"), None, "targets[0].label"),
    ("label with bell", lambda raw, _: raw["targets"][0].update(label="ring\x07"), None, "targets[0].label"),
    ("label with RLO", lambda raw, _: raw["targets"][0].update(label="abc\u202edef"), None, "targets[0].label"),
    ("label with isolate", lambda raw, _: raw["targets"][0].update(label="x\u2066y"), None, "targets[0].label"),
    ("label with C1 CSI", lambda raw, _: raw["targets"][0].update(label="x\x9by"), None, "targets[0].label"),
    (
        "label with a lone surrogate",
        lambda raw, _: raw["targets"][0].update(label=_plain('"IF\\ud800Eval"')),
        None,
        "targets[0].label",
    ),
    ("reason with escape", lambda raw, _: raw["targets"][0].update(reason="why\x1b[2J"), None, "targets[0].reason"),
    ("reason with RLO", lambda raw, _: raw["targets"][0].update(reason="why \u202e"), None, "targets[0].reason"),
    ("claim with bell", _set(("claim",)), "a claim\x07", "claim"),
    ("claim with RLO", _set(("claim",)), "a claim \u202e reversed", "claim"),
    ("locator with escape", _set(("locator",)), "Table 1\x1b]0;title\x07", "locator"),
    ("limitation with RLO", _set(("limitations",)), ["fine", "not \u202e fine"], "limitations[1]"),
    ("changes with escape", lambda raw, _: raw["controls"][0].update(changes="x\x1bc"), None, "controls[0].changes"),
    ("params key with escape", lambda raw, _: raw["params"].update({"a\x1b": 1}), None, "params"),
    ("params value with NUL", lambda raw, _: raw["params"].update(extra="a\x00b"), None, "params.extra"),
    # -- counts within their caps that together ask for hours (issue 9)
    ("n_resamples 100000", lambda raw, _: raw["bootstrap"].update(n_resamples=100_000), None, "bootstrap.n_resamples"),
    (
        "n_replicates 100000",
        lambda raw, _: raw["params"]["power"].update(n_replicates=100_000),
        None,
        "params.power.n_replicates",
    ),
    (
        "n_relabellings 1000",
        lambda raw, _: (
            raw["controls"][0]["params"]["n_relabellings"] and raw["controls"][0]["params"].update(n_relabellings=1000)
        ),
        None,
        "controls[0].params.n_relabellings",
    ),
    (
        "n_shuffles 1000",
        lambda raw, _: (
            raw["controls"][1]["params"]["n_shuffles"] and raw["controls"][1]["params"].update(n_shuffles=1000)
        ),
        None,
        "controls[1].params.n_shuffles",
    ),
    # -- validation gaps (issue 13)
    (
        "cutoff not a date",
        lambda raw, _: raw["params"].__getitem__("cutoff") and raw["params"].update(cutoff=_plain("2025-13-45")),
        None,
        "params.cutoff",
    ),
    (
        "cutoff 30 February",
        lambda raw, _: raw["params"].__getitem__("cutoff") and raw["params"].update(cutoff="2025-02-30"),
        None,
        "params.cutoff",
    ),
    (
        "source_audit absolute",
        lambda raw, _: raw["params"]["source_audit"][0].update(file="/etc/passwd"),
        None,
        "params.source_audit[0].file",
    ),
    (
        "source_audit dot-dot",
        lambda raw, _: raw["params"]["source_audit"][0].update(file="../../../../etc/passwd"),
        None,
        "params.source_audit[0].file",
    ),
    (
        "source_audit inner dot-dot",
        lambda raw, _: raw["params"]["source_audit"][0].update(file="a/../../x.py"),
        None,
        "params.source_audit[0].file",
    ),
]

DEPTH = 1000


def _billion_laughs(text: str) -> str:
    lines = ["lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"lol{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return text + "\n".join(lines) + "\n"


#: (name, change of the file's text, the key the message must name)
TEXT_MUTATIONS = [
    ("NUL byte in the seed", lambda t: t.replace("\nseed: ", "\nseed: 1\x00", 1), "seed"),
    ("NUL byte in a comment", lambda t: "# \x00\n" + t, "(top level)"),
    ("escape byte in the claim", lambda t: t.replace("\nclaim: >-\n  ", "\nclaim: >-\n  \x1b[31m", 1), "claim"),
    ("bell byte in the locator", lambda t: t.replace("\nlocator: ", "\nlocator: \x07", 1), "locator"),
    ("DEL byte in the id", lambda t: t.replace("\nid: ", "\nid: \x7f", 1), "id"),
    ("raw RLO in the locator", lambda t: t.replace("\nlocator: ", "\nlocator: \u202e", 1), "locator"),
    ("list nested 1000 deep", lambda t: t + "deep: " + "[" * DEPTH + "]" * DEPTH + "\n", "deep"),
    ("map nested 1000 deep", lambda t: t + "deep: " + "{a: " * DEPTH + "1" + "}" * DEPTH + "\n", "deep"),
    ("block nested 200 deep", lambda t: t + "deep:\n" + "".join(" " * i + "- \n" for i in range(1, 200)), "deep"),
    ("self-referencing alias", lambda t: t + "loop: &r [*r]\n", "loop"),
    ("alias of a target", lambda t: t.replace("\ntargets:\n", "\ntargets: &t\n", 1) + "again: *t\n", "targets"),
    ("billion laughs", _billion_laughs, "lol0"),
    ("merge key with an alias", lambda t: t + "base: &b {seed: 1}\nmore:\n  <<: *b\n", "base"),
    ("two documents", lambda t: t + "---\nid: again\n", "single document"),
]


def _fifo(path: Path) -> None:
    os.mkfifo(path)


#: (name, what to put at the claim's path, a fragment the message must hold)
FILE_KINDS = [
    ("a FIFO", _fifo, "FIFO"),
    ("a symlink to /dev/zero", lambda p: p.symlink_to("/dev/zero"), "character device"),
    ("a symlink to /dev/urandom", lambda p: p.symlink_to("/dev/urandom"), "character device"),
    ("a folder", lambda p: p.mkdir(), "folder"),
    ("a 2 MiB file", lambda p: p.write_bytes(b"# padding\n" * 210_000), "1048576 bytes"),
    ("a dangling symlink", lambda p: p.symlink_to(p.parent / "nowhere.yaml"), "does not exist"),
]


def _cases():
    out = []
    for path in CLAIMS:
        for name, apply, value, key in MUTATIONS:
            out.append(pytest.param(path, ("raw", apply, value), key, id=f"{path.stem[:3]}-{name}"))
        for name, change, key in TEXT_MUTATIONS:
            out.append(pytest.param(path, ("text", change, None), key, id=f"{path.stem[:3]}-{name}"))
        for name, make, fragment in FILE_KINDS:
            out.append(pytest.param(path, ("file", make, None), fragment, id=f"{path.stem[:3]}-{name}"))
    return out


@functools.cache
def _parsed(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _write_bad(path: Path, mutation, folder: Path) -> Path | None:
    """The bad claim file made from ``path`` by ``mutation``, or None when the claim has no such field."""
    kind, apply, value = mutation
    bad = folder / path.name
    if kind == "file":
        apply(bad)
        return bad
    if kind == "text":
        bad.write_bytes(apply(path.read_text(encoding="utf-8")).encode("utf-8", "surrogatepass"))
        return bad
    raw = copy.deepcopy(_parsed(path))
    try:
        apply(raw, value)
    except (KeyError, IndexError, AttributeError, TypeError):
        return None
    text = _unplain(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False))
    bad.write_bytes(text.encode("utf-8", "surrogatepass"))
    return bad


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def untouched():
    before = {d: _digest(ROOT / d) for d in ("reports", "claims", "data")}
    yield
    assert {d: _digest(ROOT / d) for d in ("reports", "claims", "data")} == before


def test_there_are_over_250_bad_files(tmp_path):
    made = 0
    for i, case in enumerate(_cases()):
        path, mutation, _ = case.values
        folder = tmp_path / str(i)
        folder.mkdir()
        made += _write_bad(path, mutation, folder) is not None
    assert made >= 250, made


@contextlib.contextmanager
def _deadline(seconds: float):
    """A hang (a FIFO read, a billion laughs) fails the test instead of stalling the suite."""

    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _one_line(err: str, bad: Path, key: str) -> bool:
    """Some line of ``err`` names the file and the key (every problem is one line of its own)."""
    return any(str(bad) in line and key in line for line in err.splitlines())


@pytest.mark.parametrize("path, mutation, key", _cases())
def test_a_bad_claim_is_refused_by_validate_and_run(tmp_path, capsys, untouched, path, mutation, key):
    bad = _write_bad(path, mutation, tmp_path)
    if bad is None:
        pytest.skip("this claim has no such field")
    for argv in (["validate", str(bad)], ["run", "-j", "1", "--no-upstream", "--out", str(tmp_path / "out"), str(bad)]):
        with _deadline(30):
            assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert _one_line(err, bad, key), err
        assert "Traceback" not in err, err
    assert not any((tmp_path / "out").glob("*.md"))  # nothing written for a bad claim
    assert {p.name for p in tmp_path.iterdir()} <= {bad.name, "out"}  # nor anywhere beside it
