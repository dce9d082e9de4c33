"""The I-spline's Newton multi-start against the objectives the L-BFGS-B multi-start it replaced reached.

``BEFORE`` was recorded with ``harness/stats/ispline.py`` of commit 9e32335 (each start solved on the
first stage by L-BFGS-B in softplus coordinates, the best three carried through the stages, the
winner polished by Newton's method) on the 18 training sets of claim 003
(``claims/003_sigmoid_vs_baselines.yaml``: every task, every rolling pair of its periods, split by
``harness.stats.splits.rolling_splits``) at the claim's settings (tau 0.98, kappa 50, ridge 1e-4,
3 knot intervals, 4 random starts), split ``i`` with ``numpy.random.default_rng(i)``. Each pair is
``(objective_, predict(median of the training z))``; at that commit one fit (IFEval, pair 2) ended
unconverged, at the same optimum.

The Newton multi-start must reach an objective no higher (to 1e-12) and leave the boundary at the
median within 1e-6 of where it was, converged.
"""

import numpy as np
import pytest

from harness.paths import PROJECT_ROOT
from harness.protocols.estimator_comparison.protocol import period_frame
from harness.spec import load_claim
from harness.stats.ispline import ISplineQuantileRegressor
from harness.stats.splits import rolling_splits

BEFORE = {
    ("IFEval", 1): (0.006092666768527273, 0.699958291726672),
    ("IFEval", 2): (0.006332018104168896, 0.8182643111395314),
    ("IFEval", 3): (0.0068394287537357126, 0.841650764987559),
    ("BBH", 1): (0.003596380912881159, 0.6381422742103051),
    ("BBH", 2): (0.0035554275107524593, 0.6583300163046641),
    ("BBH", 3): (0.003676640574984242, 0.6792928863399593),
    ("MATH Lvl 5", 1): (0.0040221488477399465, 0.23946004496423384),
    ("MATH Lvl 5", 2): (0.006350456128024087, 0.4561570823589002),
    ("MATH Lvl 5", 3): (0.006343810096318627, 0.493147498563892),
    ("GPQA", 1): (0.002359750821122496, 0.38714272181026466),
    ("GPQA", 2): (0.0023479661055746184, 0.3910586352903483),
    ("GPQA", 3): (0.0024424561832896447, 0.413883638869856),
    ("MUSR", 1): (0.0026903711230272962, 0.524203041626222),
    ("MUSR", 2): (0.0026535385185137844, 0.5083075939284676),
    ("MUSR", 3): (0.002656014371421871, 0.5150886655247908),
    ("MMLU-Pro", 1): (0.003500803258423011, 0.4715736566390378),
    ("MMLU-Pro", 2): (0.0038020717369904493, 0.5031682891020042),
    ("MMLU-Pro", 3): (0.003838360520151666, 0.5284099908236416),
}


@pytest.fixture(scope="module")
def splits(tables):
    spec = load_claim(PROJECT_ROOT / "claims" / "003_sigmoid_vs_baselines.yaml", tables=tables)
    p = spec.params
    return p, rolling_splits(period_frame(tables, p), dict(p.tasks), period_col="period", periods=p.periods)


def test_objective_no_higher_and_boundary_unmoved(splits):
    p, sets = splits
    assert [(s.task, s.t) for s in sets] == list(BEFORE)
    for i, s in enumerate(sets):
        m = ISplineQuantileRegressor(
            tau=p.tau, kappa=p.kappa, lam=p.ispline_lam, n_intervals=p.ispline_intervals, rng=np.random.default_rng(i)
        ).fit(s.z_train, s.y_train)
        before_obj, before_q = BEFORE[s.task, s.t]
        assert m.converged_, (s.task, s.t)
        assert m.objective_ <= before_obj + 1e-12, (s.task, s.t, m.objective_ - before_obj)
        assert abs(float(m.predict([np.median(s.z_train)])[0]) - before_q) <= 1e-6, (s.task, s.t)
