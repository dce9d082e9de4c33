"""The I-spline's Newton multi-start against the fits the L-BFGS-B multi-start it replaced reached.

``BEFORE[k]`` was recorded with ``harness/stats/ispline.py`` of commit 9e32335 (unchanged on ``main``
up to 31b588b: each start solved on the first stage by L-BFGS-B in softplus coordinates, the best
three carried through the stages, the winner polished by Newton's method) on the 18 training sets of
claim 003 (``claims/003_sigmoid_vs_baselines.yaml``: every task, every rolling pair of its periods,
split by ``harness.stats.splits.rolling_splits``) at the claim's settings (tau 0.98, kappa 50, ridge
1e-4, 4 random starts) and ``k`` knot intervals: the claim's 3 and the other counts of its
``knot_grid``, which its knot-sensitivity check fits. Split ``i`` is fitted with
``numpy.random.default_rng(i)``. Each pair is ``(objective_, predict(median of the training z))``.

The Newton multi-start must end at a KKT point (checked here from the gradient, not taken from the
solver's word), reach an objective no higher (to 1e-12) and leave the boundary at the median within
1e-6 of where it was -- except where the old fit was not a minimum (``STALLED``).

At 9e32335 five of the 90 fits ended unconverged (IFEval pair 2 at 3 intervals; GPQA pair 3 and
MUSR pair 3 and MMLU-Pro pair 1 at 2; GPQA pair 2 at 5); four of them at the optimum all the same
(the new objective within 1e-14, the boundary within 4e-9).
"""

import numpy as np
import pytest

from harness.claimfiles.spec import load_claim
from harness.core.paths import PROJECT_ROOT
from harness.protocols.estimator_comparison.protocol import period_frame
from harness.stats.ispline import FTOL, ISplineQuantileRegressor, _Natural
from harness.stats.splits import rolling_splits

BEFORE = {
    2: {
        ("IFEval", 1): (0.006157508197526711, 0.7084747225350321),
        ("IFEval", 2): (0.006390707119204346, 0.8170768462524632),
        ("IFEval", 3): (0.006898170038445654, 0.8371774494093348),
        ("BBH", 1): (0.0036099416994138955, 0.6397930238250303),
        ("BBH", 2): (0.003665426933750599, 0.6760060692875391),
        ("BBH", 3): (0.0037028549340402607, 0.6836800920395888),
        ("MATH Lvl 5", 1): (0.004085658300567773, 0.2440171278678553),
        ("MATH Lvl 5", 2): (0.006472522307692612, 0.4605633800413197),
        ("MATH Lvl 5", 3): (0.006390246309695, 0.4986744974681563),
        ("GPQA", 1): (0.0023653159682761123, 0.38891131903381093),
        ("GPQA", 2): (0.0024075169155306285, 0.3996990102401053),
        ("GPQA", 3): (0.002451963266823295, 0.41452338657388343),
        ("MUSR", 1): (0.002690737897101238, 0.5239843759783384),
        ("MUSR", 2): (0.0027483998346059892, 0.512541648747533),
        ("MUSR", 3): (0.002693157609444489, 0.5223749308390597),
        ("MMLU-Pro", 1): (0.0035220826629566156, 0.4730619217619549),
        ("MMLU-Pro", 2): (0.004011810449729943, 0.5283889662159199),
        ("MMLU-Pro", 3): (0.003933801117642954, 0.5418250886672693),
    },
    3: {
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
    },
    4: {
        ("IFEval", 1): (0.00600957205235067, 0.6841844113939849),
        ("IFEval", 2): (0.006325706898266685, 0.8183358064211638),
        ("IFEval", 3): (0.006781583357303911, 0.8424001345875446),
        ("BBH", 1): (0.003551875933293848, 0.6447684377145307),
        ("BBH", 2): (0.0036258292552903896, 0.6709544176204194),
        ("BBH", 3): (0.0036679313094776004, 0.6804938597281193),
        ("MATH Lvl 5", 1): (0.003912764731778096, 0.2459739006873884),
        ("MATH Lvl 5", 2): (0.006336032903454759, 0.45598888537698906),
        ("MATH Lvl 5", 3): (0.00622577446740603, 0.5002736558107379),
        ("GPQA", 1): (0.002355186288124147, 0.38980016957944574),
        ("GPQA", 2): (0.0023744135194925828, 0.39544511083928474),
        ("GPQA", 3): (0.0024368714047576026, 0.41465509397028044),
        ("MUSR", 1): (0.002689148916603858, 0.5226864248795146),
        ("MUSR", 2): (0.002698737889329382, 0.5138876547999602),
        ("MUSR", 3): (0.002654327079200399, 0.5160002460467903),
        ("MMLU-Pro", 1): (0.0034490259609112, 0.4792894108063833),
        ("MMLU-Pro", 2): (0.003928218986410674, 0.5210663346254378),
        ("MMLU-Pro", 3): (0.003830377865539824, 0.5308921043933115),
    },
    5: {
        ("IFEval", 1): (0.005975190993766362, 0.6885121362879433),
        ("IFEval", 2): (0.0062612336727731355, 0.8211054881637502),
        ("IFEval", 3): (0.006723923459697856, 0.849468747818938),
        ("BBH", 1): (0.003538244325760963, 0.6471744662751131),
        ("BBH", 2): (0.003468827001360136, 0.6553277185333016),
        ("BBH", 3): (0.0036489270026455445, 0.6747471336833166),
        ("MATH Lvl 5", 1): (0.003849232287715473, 0.24935677261855332),
        ("MATH Lvl 5", 2): (0.006212657504187274, 0.45951103513285635),
        ("MATH Lvl 5", 3): (0.006123565689552725, 0.48518347335752104),
        ("GPQA", 1): (0.002354336798715572, 0.3896536277556877),
        ("GPQA", 2): (0.002335428108945425, 0.38965078229012895),
        ("GPQA", 3): (0.00243411252546667, 0.41287199231998734),
        ("MUSR", 1): (0.0026885861009716783, 0.5224373220442027),
        ("MUSR", 2): (0.002637904030105063, 0.5052750572708394),
        ("MUSR", 3): (0.002649438183737495, 0.514303000899323),
        ("MMLU-Pro", 1): (0.0034343107156825535, 0.48173579945834666),
        ("MMLU-Pro", 2): (0.0036898143835357787, 0.4986009053925114),
        ("MMLU-Pro", 3): (0.0037684971584623153, 0.5224802241682117),
    },
    6: {
        ("IFEval", 1): (0.005981514675290829, 0.6888751392765587),
        ("IFEval", 2): (0.006259782322063776, 0.8211525336222765),
        ("IFEval", 3): (0.00671423083306937, 0.8472707365663568),
        ("BBH", 1): (0.0035311735320221406, 0.6481588450575204),
        ("BBH", 2): (0.003492843602305111, 0.6593267659876542),
        ("BBH", 3): (0.003647342404800785, 0.6748938634465247),
        ("MATH Lvl 5", 1): (0.003842734940664323, 0.2537431832338269),
        ("MATH Lvl 5", 2): (0.006216129837672484, 0.4606344854511414),
        ("MATH Lvl 5", 3): (0.006106928292796126, 0.4777089037384584),
        ("GPQA", 1): (0.0023537318710674434, 0.39109207406445495),
        ("GPQA", 2): (0.00234533332354314, 0.3919435551993226),
        ("GPQA", 3): (0.002433392156900259, 0.412890848169876),
        ("MUSR", 1): (0.0026883861153185772, 0.5217667087541479),
        ("MUSR", 2): (0.00265328143286371, 0.5082908525985042),
        ("MUSR", 3): (0.0026478025044430996, 0.513440208714911),
        ("MMLU-Pro", 1): (0.0034261801871753234, 0.48502519118509413),
        ("MMLU-Pro", 2): (0.0037281430720745895, 0.505199783645092),
        ("MMLU-Pro", 3): (0.0037531042766203128, 0.5184511039103997),
    },
}

# GPQA pair 3 at 2 intervals: the L-BFGS-B stages stopped at y0 = 1.8e-10 and w_1 = 3e-19, w_2 = 4e-10
# (softplus coordinates approach a bound and never reach it); the Newton polish from there took one step
# onto h = 1 and its line search then failed with more decrease promised than rounding: unconverged, not
# a KKT point. The Newton stages reach y0 = 0, h = 1, w_1 = 0 exactly, 2.7e-6 lower, with the weight
# spread over the other three intervals: the boundary at the median moves by 1.1e-3.
STALLED = {("GPQA", 3, 2)}


@pytest.fixture(scope="module")
def splits(tables):
    spec = load_claim(PROJECT_ROOT / "claims" / "003_sigmoid_vs_baselines.yaml", tables=tables)
    p = spec.params
    assert sorted(BEFORE) == sorted(p.knot_grid) and p.ispline_intervals == 3
    return p, rolling_splits(period_frame(tables, p), dict(p.tasks), period_col="period", periods=p.periods)


def _assert_kkt(m, z, y, p, k):
    """Multipliers of the constraints that hold exactly non-negative; in the free directions the Newton
    decrement at most the solver's stopping tolerance (10 x FTOL x |J|, for the rounding of J)."""
    prob = _Natural.of(z, y, m.params_["breakpoints"], m.params_["degree"], p.tau, p.kappa, p.ispline_lam)
    x = prob.from_natural(m.params_)
    f, derivatives = prob(x)
    g, H = derivatives()
    assert f == pytest.approx(m.objective_, rel=1e-13)
    active = np.flatnonzero(prob.A @ x == prob.b)
    A_w = prob.A[active]
    mult = np.linalg.lstsq(A_w.T, -g, rcond=None)[0]
    assert np.all(mult >= 0.0), (k, mult)
    Z = np.linalg.svd(A_w)[2][active.size :].T
    gr, Hr = Z.T @ g, Z.T @ H @ Z
    assert np.all(np.linalg.eigvalsh(Hr) > 0.0)  # a minimum in the free directions, not a saddle
    assert 0.5 * gr @ np.linalg.solve(Hr, gr) <= 10 * FTOL * abs(f), k


@pytest.mark.parametrize("k", [pytest.param(k, marks=[] if k == 3 else pytest.mark.slow) for k in BEFORE])
def test_objective_no_higher_and_boundary_unmoved(splits, k):
    p, sets = splits
    assert [(s.task, s.t) for s in sets] == list(BEFORE[k])
    for i, s in enumerate(sets):
        m = ISplineQuantileRegressor(
            tau=p.tau, kappa=p.kappa, lam=p.ispline_lam, n_intervals=k, rng=np.random.default_rng(i)
        ).fit(s.z_train, s.y_train)
        before_obj, before_q = BEFORE[k][s.task, s.t]
        assert m.converged_, (s.task, s.t, k)
        _assert_kkt(m, s.z_train, s.y_train, p, (s.task, s.t, k))
        assert m.objective_ <= before_obj + 1e-12, (s.task, s.t, k, m.objective_ - before_obj)
        moved = abs(float(m.predict([np.median(s.z_train)])[0]) - before_q)
        if (s.task, s.t, k) in STALLED:
            assert m.objective_ < before_obj - 1e-6 and m.params_["y0"] == 0.0, (s.task, s.t, k)
        else:
            assert moved <= 1e-6, (s.task, s.t, k, moved)
