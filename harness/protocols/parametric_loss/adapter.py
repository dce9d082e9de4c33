"""Authors' arm of protocol ``parametric_loss``: the cells of the replication's notebook, run afresh."""

from __future__ import annotations

import math

from ...authors.adapters import notebook
from . import quantities as Q

NOTEBOOK = "data_analysis.ipynb"
#: The cells run, by index, with the sha256 of their source at the pinned commit.
CELLS = {
    1: "61d4ee9e69df972c05838f3541e5c49621e734463ddf9f0824ee9a633527923f",
    3: "7b932ae00e8db2fc6e1c0aa6fd554726f5932660409a65a1634308634378c0e9",
    10: "d3d009131bbfc769a028ec0cae7e43770c4cd2fe66dc3b793f32b582fe5a849a",
    15: "f3c7f9adfe5d2ac1d519e4552857be99ef36952c9ec32bf6f5c31a796ba0b28c",
    16: "266df58458fc91cd729328e8c06c59ad80328f7ed7006f53e56d54b0e947c6a5",
    18: "910a2eac17c3a2a91b830ef5e1c160fdcb5f0cffc777605460bd56243750fccb",
    21: "c6e27f3c06c04284d9fadf9a8d6493ae5132f5ac3b33318639a669eec0fdf747",
    23: "2bd5281269b25e70599e2393773990854b67d3025bceb80b98501ac57124b2c9",
    24: "637d8a1419c01666bd0c283f36a72599a0df1fb13aa068031de9137fa53ce20b",
    44: "91a0b28924a990455e6031c495bc324476bd6f9bb8ab1ffeeba0b671d07c13ca",
    45: "dbd97f4db70c584766255c884b8d0f90a41f7eeb00564db297d311ace40682ca",
    48: "a6fc1e2956e8572b2deb10b9b30a5c1bf325d4372023af20c057bb581ac40e81",
    49: "bb670c3b478f25730ce361e92cf1e7f43d5288530f31a477133b6a945648ee40",
    57: "c61cae3072f1bf85b51fc97ad98109a904c9b45ff2b043db71eb899432be21c6",
    59: "7b114f4964bcebad6398534e06b5334480a4d5c94a90f81f2f1666d840b9a0bb",
    63: "75cacb0dfd406552ab8c6d92bfafa0bd9be4240a012592632bd575c242daa6f2",
}
#: What the notebook fixes and a claim could set otherwise: its cells 14 and 44 exclude 5 runs, its losses use
#: δ = 10⁻³.
FIXED = {"exclude_highest": 5, "delta": 1e-3}
#: Controls the notebook's cells can be run under (the others change what they do not compute).
DATA_CONTROLS = ("shuffle_losses", "plant_law")

_CAPTURE_FIT = "_harness_fit = (estimated_params.copy(), float(-result.fun))"
#: Cell 21 reuses cell 18's names (``best_params``, ``best_loss``) for each resample: cell 18's are kept first.
_CAPTURE_GRID = "_harness_grid = (best_params.copy(), float(best_loss))"
#: Cell 49 uses ``chi2``, which the notebook imports in cell 34 (a Wald test on the bootstrap's covariance, not run).
_CHI2 = "from scipy.stats import chi2"
_STAND_IN = "param_list = np.zeros((2, 5))  # cell 44 takes the bootstrap's covariance first; nothing read uses it"


def _cells(*indices) -> list:
    return [(i, CELLS[i]) for i in indices]


def _changed_losses(control: dict, tex: list, seed: int) -> str:
    """Source that changes ``training_df['loss']`` after cell 3 as the control says (numpy's generator from the
    claim's seed: this arm draws its own, as the re-implementation does)."""
    head = f"import numpy as _np\n_rng = _np.random.default_rng({int(seed)})\n"
    if control["control"] == "shuffle_losses":
        return head + "training_df['loss'] = _rng.permutation(training_df['loss'].values)\n"
    a, b, e, alpha, beta = (float(v) for v in tex)
    return head + (
        "_n, _d = training_df['Model Size'].values, training_df['Training Tokens'].values\n"
        f"_law = _np.logaddexp(_np.logaddexp({a!r} - {alpha!r} * _np.log(_n), {b!r} - {beta!r} * _np.log(_d)), {e!r})\n"
        f"_noise = _rng.normal(0.0, {float(control['params']['noise_sd'])!r}, _law.shape)\n"
        "training_df['loss'] = _np.exp(_law + _noise)\n"
    )


def _outputs(compute: float, *, grid: bool, bootstrap: bool) -> dict[str, str]:
    def ratio(params: str) -> str:
        return f"(lambda nd: float(nd[1] / nd[0]))(compute_optimal_allocation({compute!r}, {params}))"

    out = {
        "fit": "_harness_fit[0].tolist()",
        "fit.loglik": "_harness_fit[1]",
        "loglik.printed": "float(log_likelihood_chinchilla_rounding_no_outliers)",
        "loglik.tex": "float(log_likelihood_chinchilla_no_outliers)",
        "lr.tex": "float(lambda_LR)",
        "p.tex": "float(lr_test_p_value)",
        "ratio.fit": ratio("_harness_fit[0]"),
        "ratio.tex": ratio("true_params"),
        "ratio.printed": ratio("true_params_rounded"),
        "n_runs": "len(indices)",
    }
    if grid:
        out |= {"grid": "_harness_grid[0].tolist()", "grid.objective": "_harness_grid[1]"}
    if bootstrap:
        out |= {
            "se": "np.sqrt(np.diag(cov_matrix_untransformed)).tolist()",
            "se.a": "float(a_std_err)",
            "width.a": "float(a_conf_int_width)",
            "required_runs": "float(required_sample_size)",
            "ratio.reported": (
                f"(lambda nd: float(nd[1] / nd[0]))(compute_optimal_allocation_from_shares({compute!r}, "
                "G(true_params), a_mid))"
            ),
        }
    return out


def _values(got: dict) -> dict[str, float]:
    """The protocol's names for what the notebook gave; a value that is not a finite number (a ratio under a law
    whose loss does not fall with N and D, on shuffled losses) is left out, as the re-implementation leaves it."""
    values = {k: float(v) for k, v in got.items() if k not in ("fit", "grid", "se")}
    values |= Q.natural("fit", got["fit"])
    if "grid" in got:
        values |= Q.natural("grid", got["grid"])
    if "se" in got:
        values |= {f"se.{k}": float(v) for k, v in zip(("A", "B", "E", "alpha", "beta"), got["se"], strict=True)}
    return {k: v for k, v in values.items() if math.isfinite(v)}


def parts(request: dict) -> list[dict]:
    """The notebook once for every claim (the same request, so one cached answer), then one request per
    control the notebook can run under. Plain dict work."""
    p = request["params"]
    for key, fixed in FIXED.items():
        if p[key] != fixed:
            raise ValueError(f"params.{key} = {p[key]}: the notebook fixes it at {fixed}")
    shared = {k: p[k] for k in ("tex", "compute")}
    main = {"params": shared, "controls": [], "seed": 0, "checkout": request["checkout"], "part": {"notebook": "main"}}
    own = [
        {**request, "params": shared, "controls": [c], "part": {"control": c["id"]}}
        for c in request["controls"]
        if c["control"] in DATA_CONTROLS
    ]
    return [main, *own]


def run(request: dict) -> dict:
    p, part = request["params"], request["part"]
    if "notebook" in part:
        cells = [
            *_cells(1, 3, 10, 15, 16, 18),
            _CAPTURE_GRID,
            *_cells(24),
            _CAPTURE_FIT,
            *_cells(21, 23, 44, 45, 48),
            _CHI2,
            *_cells(49, 57, 59, 63),
        ]
        outputs = _outputs(p["compute"], grid=True, bootstrap=True)
    else:
        (control,) = request["controls"]
        changed = _changed_losses(control, p["tex"], request["seed"])
        cells = [
            *_cells(1, 3),
            changed,
            *_cells(10, 15, 16, 24),
            _CAPTURE_FIT,
            _STAND_IN,
            *_cells(44, 45, 48),
            _CHI2,
            *_cells(49, 63),
        ]
        outputs = _outputs(p["compute"], grid=False, bootstrap=False)
    got = notebook.run_cells(
        request["checkout"], NOTEBOOK, cells, parameters="nr_of_models_excluded = 5", outputs=list(outputs.values())
    )
    values = _values({k: got[expr] for k, expr in outputs.items()})
    return {"values": values, "details": {"cells": [c[0] for c in cells if isinstance(c, tuple)]}, "controls": {}}


def combine(request: dict, answers: list[dict]) -> dict:
    """The claim's answer: the notebook's values that the claim's vocabulary names; each control the notebook
    ran under, with its values; the others without values (not run on this arm)."""
    vocab = Q.vocabulary(request["params"])
    main, *own = answers
    ran = dict(zip([c["id"] for c in request["controls"] if c["control"] in DATA_CONTROLS], own, strict=True))
    controls = {}
    for c in request["controls"]:
        cvocab = Q.control_vocabulary(c["control"], request["params"], c["params"])
        got = ran.get(c["id"])
        controls[c["id"]] = {
            "values": {k: v for k, v in (got["values"] if got else {}).items() if k in cvocab},
            "details": got["details"] if got else {"not_run": "the notebook's cells do not compute what it changes"},
        }
    return {
        "values": {k: v for k, v in main["values"].items() if k in vocab},
        "details": main["details"],
        "controls": controls,
    }
