"""Lacoste et al. (2012): a pairwise table of many algorithms over several datasets."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fastnet._validation import check_choice, check_positive, refuse_complex

from ._common import _FrozenResult
from ._lacoste_datasets import poisson_binomial_test, sign_test, wilcoxon_test
from ._lacoste_single import prob_better

__all__ = ["PAIRWISE_METHODS", "PairwiseTable", "pairwise_table"]

#: Methods of :func:`pairwise_table`.
PAIRWISE_METHODS = ("poisson_binomial", "sign", "wilcoxon")


class PairwiseTable(_FrozenResult):
    r"""Pairwise comparison of several algorithms over several datasets.

    Attributes
    ----------
    names : tuple of str
        Algorithm names, in row/column order.
    matrix : ndarray, shape (k, k)
        For ``method="poisson_binomial"``: :math:`\Pr(\text{row} \succ \text{col})`
        (diagonal 0.5; ``matrix + matrix.T == 1``), as in Lacoste et al.'s Table 2.
        For ``"sign"`` and ``"wilcoxon"``: the confidence ``1 - pvalue`` where the row
        algorithm wins more (sign) or has the larger rank sum (Wilcoxon), NaN elsewhere and
        on the diagonal, as in their Tables 3 and 4.
    pvalue : ndarray, shape (k, k) or None
        Two-sided p-values (symmetric, NaN diagonal) for ``"sign"`` and ``"wilcoxon"``;
        None for ``"poisson_binomial"``.
    method : str
        ``"poisson_binomial"``, ``"sign"`` or ``"wilcoxon"``.
    datasets : tuple of str or None
        Dataset names if given.
    """

    names: tuple
    matrix: np.ndarray
    pvalue: np.ndarray | None
    method: str
    datasets: tuple | None

    def __str__(self):
        width = max(8, *(len(n) for n in self.names)) + 1
        head = " " * width + "".join(f"{n:>{width}}" for n in self.names)
        rows = [head]
        for name, row in zip(self.names, self.matrix):
            cells = "".join(
                f"{'-':>{width}}" if np.isnan(v) else f"{v:>{width}.2f}" for v in row
            )
            rows.append(f"{name:<{width}}{cells}")
        what = {
            "poisson_binomial": "Pr(row better than column), Poisson binomial test",
            "sign": "1 - p of the sign test where row wins more often",
            "wilcoxon": "1 - p of the Wilcoxon signed-rank test where row has larger rank sum",
        }[self.method]
        return what + "\n" + "\n".join(rows)


def _as_per_example(errors, names):
    """Coerce a nested structure algorithm -> dataset -> per-example 0/1 losses."""
    out = []
    n_datasets = None
    for name, per_alg in zip(names, errors):
        if isinstance(per_alg, np.ndarray) and per_alg.ndim == 2:
            per_alg = list(per_alg)
        per_alg = list(per_alg)
        if n_datasets is None:
            n_datasets = len(per_alg)
        elif len(per_alg) != n_datasets:
            raise ValueError(
                f"`errors` must give every algorithm the same datasets; {name!r} has "
                f"{len(per_alg)}, expected {n_datasets}."
            )
        vecs = []
        for j, v in enumerate(per_alg):
            refuse_complex(v, f"errors[{name!r}][{j}]")
            v = np.asarray(v, dtype=np.float64)
            if v.ndim != 1 or v.size == 0:
                raise ValueError(
                    f"`errors[{name!r}][{j}]` must be a non-empty 1-D array of per-example "
                    f"0/1 losses, got shape {v.shape}."
                )
            if not np.all((v == 0) | (v == 1)):
                raise ValueError(
                    f"`errors[{name!r}][{j}]` must hold 0/1 losses (1 = wrong) for the "
                    "Poisson binomial test."
                )
            vecs.append(v.astype(bool))
        out.append(vecs)
    for j in range(n_datasets or 0):
        sizes = {len(out[i][j]) for i in range(len(out))}
        if len(sizes) != 1:
            raise ValueError(
                f"`errors`: dataset {j} has test sets of different sizes {sorted(sizes)}; "
                "all algorithms must be tested on the same examples."
            )
    return out


def pairwise_table(errors, *, names=None, method="poisson_binomial", datasets=None,
                   n_test=None, prior=1.0):
    r"""Compare every pair of algorithms over several datasets (Lacoste et al., Tables 2-4).

    Parameters
    ----------
    errors : mapping or sequence
        Per algorithm (a mapping ``name -> data`` or a sequence in the order of `names`):

        * for ``method="poisson_binomial"``: a sequence over datasets of 1-D arrays of
          per-example 0/1 losses (1 = misclassified) on each dataset's test set, the same
          examples in the same order for every algorithm (needed to count the examples
          only one of two classifiers gets wrong);
        * for ``"sign"`` and ``"wilcoxon"``: either of the above, or a 2-D array of shape
          (n_algorithms, n_datasets) of error rates (or counts with `n_test`).
    names : sequence of str, optional
        Algorithm names; taken from the mapping keys, else ``"A0", "A1", ...``.
    method : {"poisson_binomial", "sign", "wilcoxon"}, default="poisson_binomial"
    datasets : sequence of str, optional
        Dataset names, stored for display.
    n_test : array_like of int, shape (n_datasets,), optional
        Test-set sizes to turn error counts into rates (``"sign"``, ``"wilcoxon"``).
    prior : float, default=1.0
        Prior parameter of :func:`prob_better` and :func:`poisson_binomial_test`.

    Returns
    -------
    PairwiseTable
        ``names``, ``matrix`` (see :class:`PairwiseTable`), ``pvalue``, ``method``,
        ``datasets``; ``str(table)`` prints it.

    Raises
    ------
    ValueError
        If fewer than 2 algorithms are given, the datasets or test-set sizes do not match
        between algorithms, the losses are not 0/1 (Poisson binomial), a 2-D array of rates
        is given for the Poisson binomial test, or `method` is unknown.

    See Also
    --------
    poisson_binomial_test, sign_test, wilcoxon_test

    Notes
    -----
    For the Poisson binomial test, dataset :math:`d` gives
    :math:`p_d = I_{1/2}(k_{ij} + \tilde\alpha, k_{ji} + \tilde\alpha)` with
    :math:`k_{ij}` the number of test examples algorithm i gets wrong and j right; then
    ``matrix[i, j]`` = :func:`poisson_binomial_test` of these :math:`p_d`. Because
    :math:`I_{1/2}(a, b) = 1 - I_{1/2}(b, a)`, ``matrix[j, i] = 1 - matrix[i, j]``.
    The relation is not transitive (Section 5.1), so the table is not a ranking, and no
    correction for multiple comparisons is applied (Section 8).

    References
    ----------
    .. [1] A. Lacoste, F. Laviolette, M. Marchand, AISTATS 2012, Section 7.

    Examples
    --------
    >>> rates = {"svm": [0.157, 0.140, 0.003], "ann": [0.157, 0.150, 0.012],
    ...          "parzen": [0.172, 0.140, 0.006]}
    >>> t = pairwise_table(rates, method="sign")
    >>> t.names, float(t.pvalue[0, 1])   # svm vs ann: 2 wins, 0 losses, 1 tie
    (('svm', 'ann', 'parzen'), 0.5)
    """
    check_choice(method, "method", PAIRWISE_METHODS)
    prior = check_positive(prior, "prior")
    if isinstance(errors, Mapping):
        if names is not None and tuple(names) != tuple(errors.keys()):
            raise ValueError("`names` must match the keys of `errors` when `errors` is a mapping.")
        names = tuple(str(k) for k in errors.keys())
        data = list(errors.values())
    else:
        data = list(errors) if not isinstance(errors, np.ndarray) else errors
        names = tuple(names) if names is not None else tuple(f"A{i}" for i in range(len(data)))
        if len(names) != len(data):
            raise ValueError(
                f"`names` has {len(names)} entries but `errors` has {len(data)} algorithms."
            )
    k = len(names)
    if k < 2:
        raise ValueError(f"`errors` must hold at least 2 algorithms, got {k}.")
    if len(set(names)) != k:
        raise ValueError(f"`names` must be distinct, got {names!r}.")

    # Decide the input form: a rectangular table of numbers (rates) or nested losses.
    rates = None
    refuse_complex(data, "errors")
    try:
        arr = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError):
        arr = None
    if arr is not None and arr.ndim == 2 and method != "poisson_binomial":
        rates = arr
    if rates is None:
        if arr is not None and arr.ndim == 2 and method == "poisson_binomial":
            raise ValueError(
                "`errors` holds one number per algorithm and dataset; the Poisson binomial "
                "test needs per-example 0/1 losses for every dataset (or use method='sign' "
                "or 'wilcoxon')."
            )
        losses = _as_per_example(data, names)
        n_datasets = len(losses[0])
        if n_datasets == 0:
            raise ValueError("`errors` must hold at least one dataset.")
        if method != "poisson_binomial":
            rates = np.array([[v.mean() for v in per_alg] for per_alg in losses])
    else:
        if not np.all(np.isfinite(rates)):
            raise ValueError("`errors` contains NaN or infinite values.")
        n_datasets = rates.shape[1]
        if n_datasets == 0:
            raise ValueError("`errors` must hold at least one dataset.")
        if n_test is not None:
            refuse_complex(n_test, "n_test")
            m = np.asarray(n_test, dtype=np.float64)
            if m.shape != (n_datasets,) or np.any(m <= 0):
                raise ValueError(
                    f"`n_test` must hold {n_datasets} test-set sizes > 0, got {m.tolist()}."
                )
            rates = rates / m
    if datasets is not None:
        datasets = tuple(str(d) for d in datasets)
        if len(datasets) != n_datasets:
            raise ValueError(f"`datasets` has {len(datasets)} names for {n_datasets} datasets.")

    matrix = np.full((k, k), np.nan)
    pvals = None
    if method == "poisson_binomial":
        np.fill_diagonal(matrix, 0.5)
        for i in range(k):
            for j in range(i + 1, k):
                p = np.array([
                    prob_better(
                        np.count_nonzero(losses[i][d] & ~losses[j][d]),
                        np.count_nonzero(losses[j][d] & ~losses[i][d]),
                        prior,
                    )
                    for d in range(n_datasets)
                ])
                prob = poisson_binomial_test(p, prior).probability
                matrix[i, j] = prob
                matrix[j, i] = 1.0 - prob
    else:
        pvals = np.full((k, k), np.nan)
        test = sign_test if method == "sign" else wilcoxon_test
        for i in range(k):
            for j in range(i + 1, k):
                r = test(rates[i], rates[j])
                pvals[i, j] = pvals[j, i] = r.pvalue
                if r.better == "A":
                    matrix[i, j] = 1.0 - r.pvalue
                elif r.better == "B":
                    matrix[j, i] = 1.0 - r.pvalue
    return PairwiseTable(names=names, matrix=matrix, pvalue=pvals, method=method, datasets=datasets)
