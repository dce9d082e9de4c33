"""The environment a pin declares: built once per declaration with uv, reused, and nothing left of a failed build.

No test here downloads: uv makes the virtual environment offline, the install step is either stubbed (reuse and
rebuild) or told to stay offline (``UV_OFFLINE``), so a package outside uv's cache cannot be had.
"""

from __future__ import annotations

import pytest
import yaml

from harness.authors import environment as envmod
from harness.authors.checkout import load_pins
from harness.authors.environment import declaration_digest, environment
from harness.core.errors import UpstreamError

pytest.importorskip("uv", reason="building an environment needs uv (pip install -e .)")


@pytest.fixture
def installs(monkeypatch):
    """The install step, stubbed: the packages each build was asked to install."""
    calls = []
    monkeypatch.setattr(envmod, "_install", lambda pin, packages, python: calls.append(list(packages)))
    return calls


def test_an_environment_is_built_once_and_reused_while_its_declaration_is_unchanged(tmp_path, installs):
    first = environment("p", ["a==1.0", "b==2.0"], tmp_path)
    again = environment("p", ["b==2.0", "a==1.0"], tmp_path)  # the same declaration, in another order
    assert installs == [["a==1.0", "b==2.0"]]
    assert again == first and first.folder == tmp_path / declaration_digest(["a==1.0", "b==2.0"])
    assert first.python.is_file() and first.base_prefix.is_dir()


def test_a_changed_declaration_builds_another_environment(tmp_path, installs):
    first = environment("p", ["a==1.0"], tmp_path)
    second = environment("p", ["a==1.1"], tmp_path)
    assert installs == [["a==1.0"], ["a==1.1"]] and second.folder != first.folder
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.digest, second.digest])


def test_a_package_that_cannot_be_had_names_the_pin_and_the_package_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("UV_OFFLINE", "1")  # the package is not in uv's cache: it cannot be had, whatever the network
    with pytest.raises(UpstreamError) as info:
        environment("p", ["six==1.16.0", "no-such-package-for-the-harness==1.0"], tmp_path)
    said = str(info.value)
    assert said.startswith("the environment of pin 'p' could not be built: no-such-package-for-the-harness==1.0 failed")
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_build_leaves_nothing(tmp_path, monkeypatch):
    def interrupted(pin, packages, python):
        raise KeyboardInterrupt

    monkeypatch.setattr(envmod, "_install", interrupted)
    with pytest.raises(KeyboardInterrupt):
        environment("p", ["a==1.0"], tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "packages, expected",
    [
        (["numpy>=1.26"], "fake.packages: each package must be name==version (an exact version), got 'numpy>=1.26'"),
        (["numpy"], "got 'numpy'"),
        (["numpy==1.26.4", "NumPy==1.26.3"], "each package must be named once, got numpy more than once"),
        ([], "fake.packages: "),
    ],
)
def test_a_declaration_without_exact_versions_names_the_file_and_the_field(tmp_path, packages, expected):
    path = tmp_path / "upstream.yaml"
    path.write_text(yaml.safe_dump({"fake": {"url": "u", "commit": "a" * 40, "paths": ["a/"], "packages": packages}}))
    with pytest.raises(UpstreamError) as info:
        load_pins(path)
    assert str(info.value).startswith(f"{path}: ") and expected in str(info.value)


def test_the_chinchilla_pin_declares_its_notebooks_tools():
    pin = load_pins()["analyzing-chinchilla"]
    names = {p.split("==")[0] for p in pin.packages}
    assert {"autograd", "numpy", "scikit-learn", "ipykernel", "nbclient", "nbformat"} <= names
    assert load_pins()["prescriptive-scaling"].packages is None  # runs in the harness's own interpreter
