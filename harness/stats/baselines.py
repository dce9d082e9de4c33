"""Baseline quantile estimators of the paper's Table 2 (Section 3.1.1).

* :class:`ConstantQuantileRegressor` ("Constant"): the empirical
  ``tau``-quantile of the training scores, ``np.quantile(y, tau)`` with
  numpy's default (linear interpolation, "type 7") rule. It is *not* the
  minimiser of the smoothed pinball loss.
* :class:`LossMinimisingConstantRegressor`: the constant in ``[0, 1]``
  minimising the mean smoothed pinball loss. It is what the sigmoid estimator
  becomes with ``beta = 0`` (then ``y0 + L*sigmoid(a)`` is one free level in
  ``[0, 1]`` and the ridge term vanishes), hence the ``beta = 0`` control.
* :class:`BinwiseQuantileRegressor` ("Binwise"): one such loss-minimising
  constant per group-aware equal-mass bin of the training ``z``
  (:func:`harness.stats.binning.equal_mass_bins`); new points take the
  constant of the training bin they fall in, bins being the half-open
  intervals between the training bins' left edges
  (:func:`harness.stats.binning.assign_to_bins`: a point in a gap between
  two training bins takes the lower one; points outside the training range
  take the first or last bin).

The loss-minimising constant solves a one-dimensional convex problem exactly:
with ``J(c) = mean_i rho(y_i - c)``,
``J'(c) = (1 - tau) - mean_i sigmoid(kappa (y_i - c))``, increasing in ``c``;
the minimiser is the root of ``J'`` in ``[lower, upper]`` or the bound where
``J'`` does not change sign.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from ._inputs import check_y, check_zy
from .binning import assign_to_bins, equal_mass_left_edges
from .pinball import check_loss_settings, smoothed_pinball_loss

__all__ = [
    "smoothed_pinball_constant",
    "ConstantQuantileRegressor",
    "LossMinimisingConstantRegressor",
    "BinwiseQuantileRegressor",
]


def smoothed_pinball_constant(y, tau: float, kappa: float, lower: float = 0.0, upper: float = 1.0) -> float:
    """``argmin_{lower <= c <= upper} mean_i rho_{tau,kappa}(y_i - c)``.

    Parameters
    ----------
    y : array_like
        Scores.
    tau, kappa : float
        Quantile level and smoothing of the loss.
    lower, upper : float
        Box for the constant.

    Returns
    -------
    float

    Examples
    --------
    With all scores equal to 0.5 the condition ``sigmoid(kappa (0.5 - c)) = 1 - tau``
    gives ``c = 0.5 + logit(tau) / kappa``:

    >>> round(smoothed_pinball_constant([0.5, 0.5], 0.9, 10.0), 10), round(0.5 + float(np.log(9)) / 10, 10)
    (0.7197224577, 0.7197224577)
    """
    y = check_y(y)
    n = y.size

    def slope(c: float) -> float:  # np.mean's sum and division without its wrapper (the same bits)
        return (1.0 - tau) - float(np.add.reduce(expit(kappa * (y - c)))) / n

    if slope(lower) >= 0.0:
        return float(lower)
    if slope(upper) <= 0.0:
        return float(upper)
    return float(brentq(slope, lower, upper, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200))


class ConstantQuantileRegressor:
    """Predicts ``np.quantile(y_train, tau)`` everywhere ("Constant" row of Table 2).

    Attributes
    ----------
    params_ : dict
        ``{"c": level}``.
    """

    def __init__(self, *, tau: float):
        self.tau = tau

    def fit(self, z, y):
        check_loss_settings(tau=self.tau)
        _, y = check_zy(z, y)
        self.params_ = {"c": float(np.quantile(y, self.tau))}
        return self

    def predict(self, z) -> np.ndarray:
        return np.full(np.shape(z), self.params_["c"], dtype=float)


class LossMinimisingConstantRegressor:
    """The constant in ``[0, 1]`` minimising the mean smoothed pinball loss (``beta = 0``).

    Attributes
    ----------
    params_ : dict
        ``{"c": level}``.
    objective_ : float
        Mean smoothed pinball loss at ``c``.
    """

    def __init__(self, *, tau: float, kappa: float):
        self.tau = tau
        self.kappa = kappa

    def fit(self, z, y):
        check_loss_settings(tau=self.tau, kappa=self.kappa)
        _, y = check_zy(z, y)
        c = smoothed_pinball_constant(y, self.tau, self.kappa)
        self.params_ = {"c": c}
        self.objective_ = float(np.mean(smoothed_pinball_loss(y - c, self.tau, self.kappa)))
        return self

    def predict(self, z) -> np.ndarray:
        return np.full(np.shape(z), self.params_["c"], dtype=float)


class BinwiseQuantileRegressor:
    """Per-bin loss-minimising constants on group-aware equal-mass bins ("Binwise").

    Parameters
    ----------
    tau, kappa : float
        Loss settings.
    n_bins, min_bin_size : int
        Passed to :func:`harness.stats.binning.equal_mass_left_edges`.
    closing_group : {"next", "same"}
        Binning reading, see :mod:`harness.stats.binning`.

    Attributes
    ----------
    params_ : dict
        ``{"levels": [...], "left_edges": [...], "counts": [...]}``: one level
        per training bin, the smallest training z of each bin, points per bin.
    train_bins_ : ndarray of int
        Bin of every training point.
    """

    def __init__(
        self, *, tau: float, kappa: float, n_bins: int = 10, min_bin_size: int = 30, closing_group: str = "next"
    ):
        self.tau = tau
        self.kappa = kappa
        self.n_bins = n_bins
        self.min_bin_size = min_bin_size
        self.closing_group = closing_group

    def fit(self, z, y):
        check_loss_settings(tau=self.tau, kappa=self.kappa)
        z, y = check_zy(z, y)
        left = equal_mass_left_edges(z, self.n_bins, self.min_bin_size, closing_group=self.closing_group)
        bins = assign_to_bins(z, left)
        levels = [smoothed_pinball_constant(y[bins == b], self.tau, self.kappa) for b in range(left.size)]
        self.train_bins_ = bins
        self.params_ = {
            "levels": [float(v) for v in levels],
            "left_edges": [float(e) for e in left],
            "counts": [int(c) for c in np.bincount(bins, minlength=left.size)],
        }
        return self

    def predict(self, z) -> np.ndarray:
        b = assign_to_bins(z, self.params_["left_edges"])
        return np.asarray(self.params_["levels"], dtype=float)[b]
