"""The sigmoid boundary estimator: gradients, toy fits with known answers, coverage."""

import numpy as np
import pytest
from scipy.optimize import minimize
from stacks import assert_stack_matches

from harness.stats import sigmoid
from harness.stats.pinball import LossPoints
from harness.stats.sigmoid import SigmoidQuantileRegressor, _Problem, fit_together, sigmoid_boundary, sigmoid_objective

sigmoid_fit_together = fit_together


def _toy(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    z = rng.uniform(-1, 4, n)
    # The truth: median curve 0.1 + 0.6*sigmoid(-2 + 1.2 z) plus uniform noise of half-width 0.05.
    y = sigmoid_boundary(z, 0.1, 0.6, -2.0, 1.2) + rng.uniform(-0.05, 0.05, n)
    return z, y


def _problem(z, y, boxed, tau=0.9, kappa=25.0, lam=1e-2):
    return _Problem(z, y, tau, kappa, lam, (0.05, 50.0) if boxed else None)


def _interior_points(prob, rng, n=5):
    """Feasible ``x`` strictly inside the constraints."""
    for _ in range(n):
        y0 = rng.uniform(0.05, 0.4)
        h = rng.uniform(y0 + 0.1, 0.95)
        third = rng.uniform(-1.0, 1.0) if prob.box is None else rng.uniform(0.0, 3.0)
        yield np.array([y0, h, third, rng.uniform(0.2, 3.0)])


@pytest.mark.parametrize("tied", [False, True], ids=["distinct-z", "tied-z"])
@pytest.mark.parametrize("weighted", ["rows", "counts", "real"])
@pytest.mark.parametrize("boxed", [False, True], ids=["free", "authors-box"])
def test_gradient_and_hessian_match_finite_differences(boxed, weighted, tied):
    z, y = _toy(500)
    if tied:  # 50 distinct values of z, ten rows each: the sigmoid computed once per value
        z = np.repeat(z[:50], 10)
    prob = _problem(z, y, boxed)
    assert (prob.ties.sizes is not None) == tied
    if weighted != "rows":  # each row standing for 1-4 equal rows, or weighing a real number in (0.01, 3)
        g = np.random.default_rng(4)
        w = g.integers(1, 5, z.size).astype(float) if weighted == "counts" else g.uniform(0.01, 3.0, z.size)
        prob = _Problem(z, y, prob.tau, prob.kappa, prob.lam, prob.box, w)
    rng = np.random.default_rng(0)
    h = 1e-6
    for x in _interior_points(prob, rng):
        _, g, H = prob.value_grad_hess(x)
        fd_g = np.array([(prob(x + h * e)[0] - prob(x - h * e)[0]) / (2 * h) for e in np.eye(4)])
        fd_H = np.array(
            [(prob.value_grad_hess(x + h * e)[1] - prob.value_grad_hess(x - h * e)[1]) / (2 * h) for e in np.eye(4)]
        )
        np.testing.assert_allclose(g, fd_g, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(H, fd_H, rtol=1e-5, atol=1e-7)
        np.testing.assert_array_equal(H, H.T)


@pytest.mark.parametrize("boxed", [False, True], ids=["free", "authors-box"])
def test_objective_in_x_equals_objective_in_natural_parameters(boxed):
    z, y = _toy(200)
    prob = _problem(z, y, boxed, tau=0.98, kappa=50.0, lam=1e-3)
    for x in _interior_points(prob, np.random.default_rng(1)):
        assert prob(x)[0] == pytest.approx(
            sigmoid_objective(prob.natural(x), z, y, tau=0.98, kappa=50.0, lam=1e-3), rel=1e-13
        )
        np.testing.assert_allclose(prob.from_natural(*prob.natural(x)), x, rtol=1e-13, atol=1e-15)


def test_box_keeps_midpoint_in_the_data_and_slope_in_its_limits():
    # Data whose unconstrained 0.98-boundary has its midpoint far beyond the largest z
    # (a straight rising envelope): the box must hold the midpoint at the edge.
    rng = np.random.default_rng(5)
    z = rng.uniform(0, 2, 2000)
    y = 0.05 + 0.1 * z + rng.uniform(0, 0.05, z.size)
    free = SigmoidQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-3, rng=np.random.default_rng(0)).fit(z, y)
    boxed = SigmoidQuantileRegressor(
        tau=0.98, kappa=50.0, lam=1e-3, box=(0.05, 50.0), rng=np.random.default_rng(0)
    ).fit(z, y)
    mid = lambda p: -p["a"] / p["beta"]
    assert mid(free.params_) > z.max()
    assert z.min() <= mid(boxed.params_) <= z.max() + 1e-9
    assert 0.05 - 1e-12 <= boxed.params_["beta"] <= 50.0 + 1e-9
    # A constrained optimum can only be worse on the same objective.
    assert boxed.objective_ >= free.objective_ - 1e-12


def test_recovers_a_known_upper_quantile_curve():
    # With y = m(z) + U(-0.05, 0.05), the exact 0.98-quantile is m(z) + 0.046: the
    # same sigmoid shifted up, i.e. y0 + 0.046. Smoothing (kappa=200) and finite n blur
    # it by a few thousandths; no ridge so beta is not shrunk.
    z, y = _toy(4000)
    m = SigmoidQuantileRegressor(tau=0.98, kappa=200.0, lam=0.0, rng=np.random.default_rng(0)).fit(z, y)
    grid = np.linspace(-1, 4, 11)
    truth = sigmoid_boundary(grid, 0.146, 0.6, -2.0, 1.2)
    np.testing.assert_allclose(m.predict(grid), truth, atol=0.01)


@pytest.mark.parametrize("tau", [0.5, 0.9, 0.98])
def test_quantile_fit_leaves_about_one_minus_tau_above(tau):
    z, y = _toy(4000, seed=3)
    # kappa = 2000: the smoothing width 1/kappa is small against the noise width 0.1,
    # so the first-order condition mean(sigmoid(kappa*u)) = 1 - tau pins the share above.
    m = SigmoidQuantileRegressor(tau=tau, kappa=2000.0, lam=0.0, rng=np.random.default_rng(0)).fit(z, y)
    above = np.mean(y > m.predict(z))
    # Binomial sd at n=4000 is at most 0.008.
    assert above == pytest.approx(1 - tau, abs=0.02)


def test_constraints_hold_by_construction():
    z, y = _toy(1000)
    m = SigmoidQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-3, rng=np.random.default_rng(0)).fit(z, y)
    p = m.params_
    assert p["y0"] >= 0 and p["L"] >= 0 and p["y0"] + p["L"] <= 1 and p["beta"] >= 0


def _natural(model):
    return [model.params_[k] for k in ("y0", "L", "a", "beta")]


def _toy_at_zero(n=2000, seed=4):
    """Data whose 0.98-boundary wants a level below 0: the fit sits on ``y0 = 0``."""
    rng = np.random.default_rng(seed)
    z = rng.uniform(-1, 4, n)
    return z, sigmoid_boundary(z, -0.1, 1.0, -2.0, 1.2) + rng.uniform(-0.05, 0.05, n)


KW = dict(tau=0.98, kappa=50.0, lam=1e-3)
SHARP = dict(tau=0.98, kappa=200.0, lam=0.0)
# case -> (data, settings, constraints active at the optimum: 0 is y0 >= 0, 1 is y0 + L <= 1)
CASES = {"interior": (_toy, SHARP, []), "y0=0": (_toy_at_zero, SHARP, [0]), "y0=0,top=1": (_toy_at_zero, KW, [0, 1])}


@pytest.mark.parametrize("case", list(CASES))
def test_the_fit_is_a_kkt_point(case):
    # In x = (y0, h, c, beta): g + A_W' l = 0 with l > 0 over the constraints that hold
    # with equality (reached exactly), and the gradient zero in every other direction.
    data, kw, expected = CASES[case]
    z, y = data()
    m = SigmoidQuantileRegressor(rng=np.random.default_rng(0), **kw).fit(z, y)
    prob = _Problem(z, y, **kw)
    x = prob.from_natural(*_natural(m))
    f, g, H = prob.value_grad_hess(x)
    assert f == pytest.approx(m.objective_, rel=1e-14)
    active = np.flatnonzero(prob.A @ x == prob.b)
    assert active.tolist() == expected
    A_w = prob.A[active]
    mult = np.linalg.lstsq(A_w.T, -g, rcond=None)[0]
    assert np.all(mult > 1e-6)
    np.testing.assert_allclose(g + A_w.T @ mult, 0.0, atol=1e-9)
    # and the Newton step in the free directions is below 1e-8: the reduced Hessian is
    # positive definite (a minimum, not a saddle) and the point is where its model says
    free = [i for i in range(4) if not np.any(A_w[:, i])]
    Hr = H[np.ix_(free, free)]
    assert np.all(np.linalg.eigvalsh(Hr) > 0)
    assert np.max(np.abs(np.linalg.solve(Hr, g[free]))) < 1e-8
    assert m.converged_


@pytest.mark.parametrize("case", list(CASES))
def test_a_second_optimiser_finds_no_lower_objective(case):
    # SLSQP (gradient-based) and Nelder-Mead (derivative-free) in the natural parameters,
    # started at our optimum and at a perturbed point, must not beat the Newton fit.
    data, kw, _ = CASES[case]
    z, y = data()
    m = SigmoidQuantileRegressor(rng=np.random.default_rng(0), **kw).fit(z, y)
    ours = sigmoid_objective(_natural(m), z, y, **kw)
    assert ours == pytest.approx(m.objective_, rel=1e-14)

    def f(p):
        y0, L, a, beta = p
        if y0 < 0 or L < 0 or y0 + L > 1 or beta < 0:
            return np.inf
        return sigmoid_objective(p, z, y, **kw)

    for start in (_natural(m), [0.05, 0.8, -1.0, 1.0]):
        res = minimize(f, start, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000})
        assert res.fun >= ours - 1e-12
        res = minimize(
            lambda p: sigmoid_objective(p, z, y, **kw),
            start,
            method="SLSQP",
            bounds=[(0, 1), (0, 1), (None, None), (0, None)],
            constraints=[{"type": "ineq", "fun": lambda p: 1 - p[0] - p[1]}],
            options={"ftol": 1e-15, "maxiter": 1000},
        )
        assert f(res.x) >= ours - 1e-12


@pytest.mark.parametrize("box", [None, (0.05, 50.0)], ids=["free", "authors-box"])
def test_init_starts_one_solve_from_given_parameters(box):
    z, y = _toy(2000)
    full = SigmoidQuantileRegressor(rng=np.random.default_rng(0), box=box, **KW).fit(z, y)
    # From its own optimum the fit stays put; no generator is needed.
    again = SigmoidQuantileRegressor(rng=None, box=box, **KW).fit(z, y, init=full.params_)
    assert again.objective_ <= full.objective_ + 1e-15
    assert again.n_iter_ <= 2 and again.converged_
    np.testing.assert_allclose(_natural(again), _natural(full), rtol=1e-7, atol=1e-9)
    # On resamples it reaches what a fresh multi-start fit reaches.
    rng = np.random.default_rng(1)
    for _ in range(3):
        i = rng.integers(0, z.size, z.size)
        fresh = SigmoidQuantileRegressor(rng=np.random.default_rng(2), box=box, **KW).fit(z[i], y[i])
        warm = SigmoidQuantileRegressor(box=box, **KW).fit(z[i], y[i], init=full.params_)
        assert warm.objective_ <= fresh.objective_ + 1e-12 and warm.converged_
        np.testing.assert_allclose(warm.predict([0.0, 1.5, 3.0]), fresh.predict([0.0, 1.5, 3.0]), atol=1e-6)


def test_init_outside_the_constraints_is_moved_inside():
    z, y = _toy(1000)
    m = SigmoidQuantileRegressor(box=(0.05, 50.0), **KW).fit(
        z, y, init={"y0": -0.2, "L": 1.5, "a": 40.0, "beta": 100.0}
    )
    p = m.params_
    assert p["y0"] >= 0 and p["L"] >= 0 and p["y0"] + p["L"] <= 1 and 0.05 <= p["beta"] <= 50.0
    assert m.converged_


def test_a_fit_draws_two_uniforms_per_random_start():
    # The claims pass one generator through many fits: the stream must not depend on the optimiser.
    z, y = _toy(500)
    rng, ref = np.random.default_rng(3), np.random.default_rng(3)
    SigmoidQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-3, n_random=4, rng=rng).fit(z, y)
    ref.uniform(size=4)
    ref.uniform(size=4)
    assert rng.bit_generator.state == ref.bit_generator.state
    SigmoidQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-3, n_random=4, rng=rng).fit(
        z, y, init={"y0": 0.1, "L": 0.6, "a": -2.0, "beta": 1.2}
    )
    assert rng.bit_generator.state == ref.bit_generator.state


def test_same_generator_seed_gives_identical_fits():
    z, y = _toy(800)
    a = SigmoidQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-3, rng=np.random.default_rng(7)).fit(z, y).params_
    b = SigmoidQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-3, rng=np.random.default_rng(7)).fit(z, y).params_
    assert a == b


def test_random_starts_need_an_explicit_generator():
    z, y = _toy(100)
    with pytest.raises(ValueError, match="rng"):
        SigmoidQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-3, n_random=3).fit(z, y)


def test_rejects_bad_shapes():
    with pytest.raises(ValueError, match="equal length"):
        SigmoidQuantileRegressor(tau=0.98, kappa=50.0, lam=1e-3, n_random=0).fit(np.zeros(5), np.zeros(4))


@pytest.mark.parametrize("boxed", [False, True], ids=["free", "authors-box"])
def test_rows_with_counts_are_the_rows_repeated(boxed):
    # A resample as its distinct rows and their multiplicities: the same objective, gradient and Hessian at every
    # point as the resample itself (to rounding), and the same warm-started fit.
    z, y = _toy(400)
    rng = np.random.default_rng(3)
    i = rng.integers(0, z.size, z.size)
    rows, counts = np.unique(i, return_counts=True)
    box = (0.05, 50.0) if boxed else None
    repeated = _Problem(z[i], y[i], 0.98, 50.0, 1e-3, box)
    counted = _Problem(z[rows], y[rows], 0.98, 50.0, 1e-3, box, counts.astype(float))
    for x in _interior_points(repeated, rng):
        x_c = counted.from_natural(*repeated.natural(x))  # the centring of z is the same mean, summed otherwise
        f1, g1, H1 = repeated.value_grad_hess(x)
        f2, g2, H2 = counted.value_grad_hess(x_c)
        assert f2 == pytest.approx(f1, rel=1e-13)
        np.testing.assert_allclose(g2, g1, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(H2, H1, rtol=1e-10, atol=1e-12)
    kw = {"tau": 0.98, "kappa": 50.0, "lam": 1e-3, "box": box}
    full = SigmoidQuantileRegressor(rng=np.random.default_rng(0), **kw).fit(z, y)
    a = SigmoidQuantileRegressor(**kw).fit(z[i], y[i], init=full.params_)
    b = SigmoidQuantileRegressor(**kw).fit(z[rows], y[rows], init=full.params_, weights=counts)
    assert a.converged_ and b.converged_ and b.objective_ == pytest.approx(a.objective_, rel=1e-13)
    np.testing.assert_allclose(b.predict([0.0, 1.5, 3.0]), a.predict([0.0, 1.5, 3.0]), atol=1e-8)


def _base_models(n=600, seed=7):
    """Rows in 60 base models of 1-19 fine-tunes each: the fine-tunes share the model's z."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 20, 60)
    z = np.repeat(rng.uniform(-1, 4, 60), sizes)
    y = sigmoid_boundary(z, 0.1, 0.6, -2.0, 1.2) + rng.uniform(-0.05, 0.05, z.size)
    return z, y, sizes


@pytest.mark.parametrize("scale", [1.0, 0.5], ids=["counts", "halved"])
def test_integer_weights_fit_as_the_rows_repeated(scale):
    # Weights 1-3 (halved: the same weighted mean): the objective, gradient and Hessian of the rows repeated, and
    # the same fit from the multistart.
    z, y, _ = _base_models()
    w = np.random.default_rng(8).integers(1, 4, z.size)
    repeated = _Problem(np.repeat(z, w), np.repeat(y, w), 0.98, 50.0, 1e-3)
    weighted = _Problem(z, y, 0.98, 50.0, 1e-3, None, scale * w)
    for x in _interior_points(repeated, np.random.default_rng(9)):
        x_w = weighted.from_natural(*repeated.natural(x))
        f1, g1, H1 = repeated.value_grad_hess(x)
        f2, g2, H2 = weighted.value_grad_hess(x_w)
        assert f2 == pytest.approx(f1, rel=1e-12)
        np.testing.assert_allclose(g2, g1, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(H2, H1, rtol=1e-10, atol=1e-12)
    kw = {"tau": 0.98, "kappa": 50.0, "lam": 1e-3, "n_random": 0}
    rep = SigmoidQuantileRegressor(**kw).fit(np.repeat(z, w), np.repeat(y, w))
    wt = SigmoidQuantileRegressor(**kw).fit(z, y, weights=scale * w)
    assert wt.converged_ and wt.objective_ == pytest.approx(rep.objective_, rel=1e-10)
    np.testing.assert_allclose(wt.predict([0.0, 1.5, 3.0]), rep.predict([0.0, 1.5, 3.0]), atol=1e-8)


@pytest.mark.parametrize("c", [0.37, 1.0, 5.0])
def test_equal_weights_give_the_unweighted_fit(c):
    z, y, _ = _base_models()
    kw = {"tau": 0.98, "kappa": 50.0, "lam": 1e-3, "n_random": 2}
    plain = SigmoidQuantileRegressor(rng=np.random.default_rng(0), **kw).fit(z, y)
    weighted = SigmoidQuantileRegressor(rng=np.random.default_rng(0), **kw).fit(z, y, weights=np.full(z.size, c))
    assert weighted.objective_ == pytest.approx(plain.objective_, rel=1e-12)
    np.testing.assert_allclose(weighted.predict([0.0, 1.5, 3.0]), plain.predict([0.0, 1.5, 3.0]), atol=1e-10)


def test_cluster_weights_make_each_base_model_weigh_one():
    # Weights 1/n_g: the objective equals the unweighted one on one row per base model when every fine-tune of a
    # model has its score (so the weighted mean over a model's rows is that row's loss), and the weighted fit is
    # the fit to those rows.
    z, y, sizes = _base_models()
    first = np.r_[0, np.cumsum(sizes)[:-1]]
    y = y[first].repeat(sizes)
    w = 1.0 / sizes.repeat(sizes)
    kw = {"tau": 0.9, "kappa": 50.0, "lam": 1e-3, "n_random": 0}
    one = SigmoidQuantileRegressor(**kw).fit(z[first], y[first])
    weighted = SigmoidQuantileRegressor(**kw).fit(z, y, weights=w, init=one.params_)
    assert weighted.objective_ == pytest.approx(one.objective_, rel=1e-12)
    np.testing.assert_allclose(weighted.predict([0.0, 1.5, 3.0]), one.predict([0.0, 1.5, 3.0]), atol=1e-9)


def test_weights_are_refused_when_not_positive_or_not_one_per_row():
    z, y = _toy(100)
    m = SigmoidQuantileRegressor(rng=np.random.default_rng(0), tau=0.98, kappa=50.0, lam=1e-3)
    init = {"y0": 0.1, "L": 0.6, "a": -2.0, "beta": 1.2}
    for bad in (np.zeros(z.size), np.full(z.size, -1.5), np.full(z.size, np.nan), np.ones(z.size - 1)):
        with pytest.raises(ValueError, match="weights"):
            m.fit(z, y, init=init, weights=bad)
        with pytest.raises(ValueError, match="weights"):
            m.fit(z, y, weights=bad)


@pytest.mark.parametrize("counted", [False, True], ids=["rows", "rows-with-counts"])
def test_refit_settings_gives_each_settings_own_fit(counted):
    # Several loss settings refitted to the same points share their sorting: fit for fit the same numbers as
    # one regressor per setting (==, not approx: the same operations on the same arrays).
    z, y = _toy(600)
    counts = np.random.default_rng(5).integers(1, 4, z.size) if counted else None
    settings = [
        {"tau": 0.98, "kappa": 50.0, "lam": 1e-3},
        {"tau": 0.98, "kappa": 50.0, "lam": 1e-2},  # the first's loss terms, another ridge
        {"tau": 0.95, "kappa": 50.0, "lam": 1e-3},
        {"tau": 0.98, "kappa": 100.0, "lam": 1e-3},
    ]
    inits = [SigmoidQuantileRegressor(rng=np.random.default_rng(0), **s).fit(z, y).params_ for s in settings]
    shared = SigmoidQuantileRegressor.refit_settings(z, y, settings, inits, weights=counts)
    for s, init, got in zip(settings, inits, shared):
        one = SigmoidQuantileRegressor(**s).fit(z, y, init=init, weights=counts)
        assert (got.params_, got.objective_, got.n_iter_, got.converged_) == (
            one.params_,
            one.objective_,
            one.n_iter_,
            one.converged_,
        ), s


def test_refit_settings_refuses_what_one_fit_refuses():
    z, y = _toy(100)
    init = {"y0": 0.1, "L": 0.6, "a": -2.0, "beta": 1.2}
    s = {"tau": 0.98, "kappa": 50.0, "lam": 1e-3}
    with pytest.raises(ValueError, match="box"):
        SigmoidQuantileRegressor.refit_settings(z, y, [s, {**s, "box": (0.05, 50.0)}], [init, init])
    with pytest.raises(ValueError, match="box must be"):
        SigmoidQuantileRegressor.refit_settings(z, y, [{**s, "box": (50.0, 0.05)}], [init])
    with pytest.raises(ValueError, match="tau"):
        SigmoidQuantileRegressor.refit_settings(z, y, [{**s, "tau": 1.5}], [init])
    with pytest.raises(ValueError, match="weights"):
        SigmoidQuantileRegressor.refit_settings(z, y, [s], [init], weights=np.zeros(z.size))
    with pytest.raises(ValueError):
        SigmoidQuantileRegressor.refit_settings(z, y, [s, s], [init])


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "counts"])
@pytest.mark.parametrize("kappa", [25.0, 1000.0], ids=["separable", "per-point"])
def test_problems_stacked_give_each_ones_value_and_derivatives(kappa, weighted):
    # the values of several y on one (tied) z, with one set of weights, computed together equal each problem's own
    z, y = _toy(400)
    z = np.round(z, 1)
    rng = np.random.default_rng(3)
    w = rng.integers(1, 4, z.size).astype(float) if weighted else None
    problems = [
        _Problem(z, np.clip(y + rng.normal(0, 0.05, y.size), 0, 1), 0.9, kappa, 1e-2, weights=w) for _ in range(4)
    ]
    points = LossPoints(np.stack([p.points.y for p in problems]), 0.9, kappa, problems[0].ties, problems[0].weights)
    xs = list(_interior_points(problems[0], rng, 3))
    ks = [0, 2, 3]
    assert_stack_matches(problems, points, ks, xs)


@pytest.mark.parametrize("weighted", [False, True], ids=["rows-repeated", "counts"])
@pytest.mark.parametrize("box", [None, (0.05, 50.0)], ids=["free", "authors-box"])
def test_fits_together_equal_the_fits_one_at_a_time(box, weighted):
    z, y = _toy(1500)
    rng = np.random.default_rng(4)
    ys = [np.clip(y + rng.normal(0, 0.03, y.size), 0, 1) for _ in range(3)]
    full = SigmoidQuantileRegressor(rng=np.random.default_rng(0), box=box, **KW).fit(z, ys[0])
    i, w = rng.integers(0, z.size, z.size), None
    if weighted:  # a resample's rows given once, each weighing the times it was drawn
        i, w = np.unique(i, return_counts=True)
    inits = [full.params_, {**full.params_, "beta": 2.0 * full.params_["beta"]}, full.params_]
    models = [SigmoidQuantileRegressor(box=box, **KW) for _ in ys]
    together = fit_together(models, z[i], [v[i] for v in ys], inits, weights=w)
    for m, v, init in zip(together, ys, inits):
        alone = SigmoidQuantileRegressor(box=box, **KW).fit(z[i], v[i], init=init, weights=w)
        assert m.converged_ and m.n_iter_ == alone.n_iter_
        assert m.objective_ == pytest.approx(alone.objective_, rel=1e-13)
        np.testing.assert_allclose(_natural(m), _natural(alone), rtol=1e-9, atol=1e-12)


def test_fit_many_solves_together_only_data_that_share_z_and_weights(monkeypatch):
    z, y = _toy(800)
    full = SigmoidQuantileRegressor(rng=np.random.default_rng(0), **KW).fit(z, y)
    w = np.ones(z.size)
    calls = []
    monkeypatch.setattr(sigmoid, "fit_together", lambda *a, **k: calls.append(a) or sigmoid_fit_together(*a, **k))
    shared = [(z, y, w), (z, 0.9 * y, w)]
    apart = [(z, y, w), (z[1:], y[1:], w[1:])]
    for data, together in ((shared, 1), (apart, 0)):
        models = sigmoid.fit_many([SigmoidQuantileRegressor(**KW) for _ in data], data, [full.params_] * 2)
        assert len(calls) == together
        calls.clear()
        for m, (zj, yj, wj) in zip(models, data):
            alone = SigmoidQuantileRegressor(**KW).fit(zj, yj, init=full.params_, weights=wj)
            assert m.objective_ == pytest.approx(alone.objective_, rel=1e-13)
