"""Mutation test of claim files: well over 100 bad files, generated from the five claims, each refused by
``validate`` and by ``run`` with a clear error (exit 2, the file and the key named, no traceback), and
nothing outside ``--out`` changed."""

import copy
import hashlib
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
]


def _cases():
    out = []
    for path in CLAIMS:
        for name, apply, value, key in MUTATIONS:
            out.append(pytest.param(path, apply, value, key, id=f"{path.stem[:3]}-{name}"))
    return out


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


def test_there_are_over_a_hundred_bad_files():
    assert len(_cases()) >= 100


@pytest.mark.parametrize("path, apply, value, key", _cases())
def test_a_bad_claim_is_refused_by_validate_and_run(tmp_path, capsys, untouched, path, apply, value, key):
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    try:
        apply(raw, value)
    except (KeyError, IndexError, AttributeError):
        pytest.skip("this claim has no such field")
    bad = tmp_path / path.name
    bad.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    assert cli.main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and f"{key}" in err, err
    assert "Traceback" not in err
    out = tmp_path / "out"
    assert cli.main(["run", "-j", "1", "--no-upstream", "--out", str(out), str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "Traceback" not in err
    assert not any(out.glob("*.md"))  # nothing written for a bad claim
