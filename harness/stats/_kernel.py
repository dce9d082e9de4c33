"""The smoothed pinball loss of :class:`harness.stats.pinball.LossPoints` and its derivatives in one compiled pass.

A fit's evaluation is a few thousand points; as numpy calls it is some twenty passes over them and as many
temporaries, and the calls' overhead is most of the cost. Compiled with numba, one loop over the points gives the
value and both derivatives per distinct ``z``: the sums of ``LossPoints``' docstring, within a value's points one
after the other and over the values with Neumaier's compensation (equal to numpy's pairwise sums to rounding).
:func:`sigmoid_sums` goes on to the sigmoid's gradient and Hessian (``sigmoid._Problem``'s docstring).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Factors in [1/2, 1] multiplied in runs of at most this many stay above 2**-1000 (``pinball.sum_of_logs``).
_RUN = 1000
#: The empty arrays that stand for "none" in the compiled functions' arguments (exp(-ky), ties, weights).
NO_FACTORS, NO_STARTS, NO_WEIGHTS = np.empty((0, 0)), np.empty(0, dtype=np.intp), np.empty(0)


@njit(inline="always")
def _add(total, comp, v):  # pragma: no cover - compiled
    """Neumaier's compensated sum: ``total + comp`` is the sum of the ``v`` added, ``comp`` the roundings."""
    t = total + v
    comp += (total - t) + v if abs(total) >= abs(v) else (v - t) + total
    return t, comp


@njit(inline="always")
def _loss(ky, fneg, kq, starts, w, counts, S, R):  # pragma: no cover - compiled
    """One curve: ``kq`` per distinct ``z`` (``starts`` its points' first; empty: one point each), ``x = ky - kq``
    spread to the points. Fills ``S[j]``, ``R[j]``, the sums over the points of value ``j`` of ``w_i sigmoid(x_i)``
    and ``w_i sigmoid(x_i) sigmoid(-x_i)``, and returns ``sum_i w_i (log(1 + exp(x_i)) + (tau - 1) x_i)`` as ``(P,
    X, G)``: ``P = sum w max(x, 0)``, ``X = sum w x`` and ``G = sum w log(sigmoid(|x|)) = -sum w log(1 + e)``.
    ``fneg`` (``exp(-ky)``) is empty when ``exp(-x)`` is taken per point rather than as ``exp(-ky) exp(kq)``; ``w``
    is empty when unweighted. Unweighted, or with ``counts`` (weights that are small integers), ``G`` is the log of
    products in runs, as ``pinball.sum_of_logs`` takes it; else a log per point."""
    m = kq.shape[0]
    n = ky.shape[0]
    separable = fneg.shape[0] > 0
    tied = starts.shape[0] > 0
    weighted = w.shape[0] > 0
    pos, pos_c, lin, lin_c, logs, logs_c = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    prod = 1.0
    run = 0
    for j in range(m):
        q = kq[j]
        eq = math.exp(q) if separable else 0.0
        lo = starts[j] if tied else j
        end = (starts[j + 1] if j + 1 < m else n) if tied else j + 1
        s_sum, r_sum, p_sum, l_sum, g_sum = 0.0, 0.0, 0.0, 0.0, 0.0
        for i in range(lo, end):
            x = ky[i] - q
            if separable:
                ex = fneg[i] * eq  # exp(-x)
                sig = 1.0 / (1.0 + ex)  # sigmoid(x)
                r2 = ex * sig * sig
                half = max(sig, 1.0 - sig)  # sigmoid(|x|)
            else:
                e = math.exp(-abs(x))
                half = 1.0 / (1.0 + e)
                sig = half if x >= 0.0 else 1.0 - half
                r2 = e * half * half
            wi = w[i] if weighted else 1.0
            p_sum += wi * max(x, 0.0)
            l_sum += wi * x
            s_sum += wi * sig
            r_sum += wi * r2
            if counts:
                k = int(wi) if weighted else 1
                if run + k > _RUN:
                    logs, logs_c = _add(logs, logs_c, math.log(prod))
                    prod, run = 1.0, 0
                for _ in range(k):
                    prod *= half
                run += k
            else:
                g_sum += wi * math.log(half)
        S[j] = s_sum
        R[j] = r_sum
        pos, pos_c = _add(pos, pos_c, p_sum)
        lin, lin_c = _add(lin, lin_c, l_sum)
        if not counts:
            logs, logs_c = _add(logs, logs_c, g_sum)
    if counts:
        logs, logs_c = _add(logs, logs_c, math.log(prod))
    return pos + pos_c, lin + lin_c, logs + logs_c


@njit(inline="always")
def _curve(k, kq, consts, ky, fneg, starts, w, counts, w_tied, r1, r2):  # pragma: no cover - compiled
    """The mean loss ``J`` of curve ``k`` at ``kappa q = kq`` (per distinct ``z``; ``ky`` and ``fneg`` have one row,
    or one per curve), ``consts = (tau, kappa, lam, n)``; ``r1``, ``r2`` filled with ``dJ/dq`` and ``d2J/dq2``
    summed per distinct ``z`` (``LossPoints``' docstring)."""
    tau, kappa, n = consts[0], consts[1], consts[3]
    r = k if ky.shape[0] > 1 else 0
    P, X, G = _loss(ky[r], fneg[r] if fneg.shape[0] > 0 else fneg.ravel(), kq, starts, w, counts, r1, r2)
    for j in range(kq.shape[0]):
        r1[j] = ((1.0 - tau) * w_tied[j] - r1[j]) / n
        r2[j] *= kappa / n
    return (P + (tau - 1.0) * X - G) / (kappa * n)


@njit(cache=True, nogil=True)
def loss_sums(kq, consts, ky, fneg, starts, w, counts, w_tied):  # pragma: no cover - compiled
    """:func:`_curve` of each row of ``kq``: ``(J, r1, r2)``, a row each."""
    K, m = kq.shape
    J, r1, r2 = np.empty(K), np.empty((K, m)), np.empty((K, m))
    for k in range(K):
        J[k] = _curve(k, kq[k], consts, ky, fneg, starts, w, counts, w_tied, r1[k], r2[k])
    return J, r1, r2


@njit(inline="always")
def _expit(t):  # pragma: no cover - compiled
    return 1.0 / (1.0 + math.exp(-t)) if t >= 0.0 else math.exp(t) / (1.0 + math.exp(t))


@njit(inline="always")
def _kq(x, s, consts):  # pragma: no cover - compiled
    """``kappa q = kappa (y0 + L s)`` of the curve ``x = (y0, h, ...)``, ``L = h - y0``."""
    kappa = consts[1]
    return s * (kappa * (x[1] - x[0])) + kappa * x[0]


@njit(cache=True, nogil=True)
def sigmoid_sums(X, consts, dz, ky, fneg, starts, w, counts, w_tied):  # pragma: no cover - compiled
    """The unboxed sigmoid's ``(J, gradient, Hessian)`` at each row ``X[k] = (y0, h, c, beta)``
    (``sigmoid._Problem``; ``ky`` one row, or one per curve): ``consts = (tau, kappa, lam, n)``, ``dz`` the
    distinct ``z`` less ``zbar``, ``w_tied`` the weights summed per distinct ``z``; the points as :func:`_loss`
    takes them."""
    K, m = X.shape[0], dz.shape[0]
    lam = consts[2]
    F, grad, H = np.empty(K), np.empty((K, 4)), np.zeros((K, 4, 4))
    s, r1, r2, g = np.empty(m), np.empty(m), np.empty(m), np.empty(4)
    for k in range(K):
        c, beta = X[k, 2], X[k, 3]
        L = X[k, 1] - X[k, 0]
        for j in range(m):
            s[j] = _expit(c + dz[j] * beta)
        kq = _kq(X[k], s, consts)
        F[k] = _curve(k, kq, consts, ky, fneg, starts, w, counts, w_tied, r1, r2) + lam * beta * beta
        # per distinct z, grad q = (1, 1, L, L) * (1 - s, s, s', s' dz) (sigmoid._Problem's docstring)
        sums = np.zeros(4)
        Hq = np.zeros((4, 4))
        m0, m1, m2 = 0.0, 0.0, 0.0
        for j in range(m):
            sj = s[j]
            sp = sj * (1.0 - sj)
            g[0], g[1], g[2], g[3] = 1.0 - sj, sj, sp, sp * dz[j]
            for a in range(4):
                sums[a] += g[a] * r1[j]
                for b in range(a, 4):
                    Hq[a, b] += r2[j] * g[a] * g[b]
            v = (1.0 - 2.0 * sj) * sp * r1[j]
            m0 += v
            m1 += v * dz[j]
            m2 += v * dz[j] * dz[j]
        sc = (1.0, 1.0, L, L)
        Hk = H[k]
        for a in range(4):
            grad[k, a] = sc[a] * sums[a]
            for b in range(a, 4):
                Hk[a, b] = sc[a] * sc[b] * Hq[a, b]
        grad[k, 3] += 2.0 * lam * beta
        Hk[0, 2] -= sums[2]
        Hk[1, 2] += sums[2]
        Hk[0, 3] -= sums[3]
        Hk[1, 3] += sums[3]
        Hk[2, 2] += L * m0
        Hk[2, 3] += L * m1
        Hk[3, 3] += L * m2 + 2.0 * lam
        for a in range(4):
            for b in range(a):
                Hk[a, b] = Hk[b, a]
    return F, grad, H


@njit(cache=True, nogil=True)
def ispline_sums(X, consts, D, ky, fneg, starts, w, counts, w_tied):  # pragma: no cover - compiled
    """The I-spline boundary's ``(J, gradient, Hessian)`` at each row ``X[k] = (y0, h, a0, w_1..w_p)``
    (``ispline._Natural``): ``D`` the rows ``(1, I(z))`` per distinct ``z``; the rest as :func:`sigmoid_sums`."""
    K, m, nx = X.shape[0], D.shape[0], X.shape[1]
    lam = consts[2]
    F, grad, H = np.empty(K), np.zeros((K, nx)), np.zeros((K, nx, nx))
    s, r1, r2, g = np.empty(m), np.empty(m), np.empty(m), np.empty(nx)
    for k in range(K):
        L = X[k, 1] - X[k, 0]
        for j in range(m):
            eta = 0.0
            for c in range(nx - 2):
                eta += D[j, c] * X[k, 2 + c]
            s[j] = _expit(eta)
        ridge = 0.0
        for c in range(3, nx):
            ridge += X[k, c] * X[k, c]
        kq = _kq(X[k], s, consts)
        F[k] = _curve(k, kq, consts, ky, fneg, starts, w, counts, w_tied, r1, r2) + lam * ridge
        # per distinct z, grad q = (1 - s, s, L s' D) (ispline._Natural.__call__)
        Hk = H[k]
        for j in range(m):
            sj = s[j]
            sp = sj * (1.0 - sj)
            g[0], g[1] = 1.0 - sj, sj
            for c in range(nx - 2):
                g[2 + c] = L * sp * D[j, c]
            t = r1[j] * sp
            u = L * t * (1.0 - 2.0 * sj)
            for a in range(nx):
                grad[k, a] += g[a] * r1[j]
                for b in range(a, nx):
                    Hk[a, b] += r2[j] * g[a] * g[b]
            for c in range(nx - 2):
                Hk[0, 2 + c] -= D[j, c] * t
                Hk[1, 2 + c] += D[j, c] * t
                for d in range(c, nx - 2):
                    Hk[2 + c, 2 + d] += D[j, c] * D[j, d] * u
        for c in range(3, nx):
            grad[k, c] += 2.0 * lam * X[k, c]
            Hk[c, c] += 2.0 * lam
        for a in range(nx):
            for b in range(a):
                Hk[a, b] = Hk[b, a]
    return F, grad, H
