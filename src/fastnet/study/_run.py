"""Running a study: each algorithm's K trials (through `fastnet.train_many`), resumable per
algorithm, then Hamey's measures, Lawrence's descriptions and log-rank tests."""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np

from fastnet.study._setup import Study, load_task, parse_network
from fastnet.study._bootstrap import (BOOTSTRAP_DIRECT_MAX, BOOTSTRAP_RESAMPLES,  # noqa: F401
                                      _ratio_interval, _resampled_medians, _split_medians)

__all__ = ["AlgorithmTrials", "LogRank", "StudyResult", "run_study", "logrank_test",
           "cost_unit", "COST_UNITS"]

#: Significance level below which `fastnet study` names the better algorithm.
ALPHA = 0.05

#: The units a study's verdicts compare times to success in (see `cost_unit`).
COST_UNITS = ("epochs", "traversals", "CPU time")


@dataclass(frozen=True, repr=False)
class AlgorithmTrials:
    """One algorithm's trials in a study and their measures.

    Attributes
    ----------
    spec : str
        The algorithm (:func:`fastnet.algorithms.spec_of`).
    group : int
        Index of the text (parameter grid) it came from.
    epochs : ndarray of shape (K,)
        Epochs each trial trained (to success, or the limit T).
    success : ndarray of bool, shape (K,)
        Whether each trial met the criterion before T.
    cpu_time : ndarray of shape (K,)
        CPU seconds of each trial (the batch's, shared by epochs trained).
    diverged : ndarray of bool, shape (K,)
        Trials that diverged (failures; then every trial was trained alone).
    traversals : ndarray of float, shape (K,)
        Training connection traversals each trial ran (forward + backward + update,
        :attr:`fastnet.Traversals.training`, as the training loop counted them; the
        success checks' evaluations are left out: they cost the same per epoch for every
        algorithm). NaN where unknown: a diverged trial trained alone.
    flops : ndarray of float, shape (K,)
        Floating-point operations outside the traversals (:attr:`fastnet.Traversals.flops`:
        Levenberg-Marquardt's normal equations; 0 for the others), NaN where unknown.
    hamey : fastnet.stats.HameyResult
        Success rate at T, T_E, peak efficiency, half-efficiency range, optimised
        Fahlman average, lambda, corrected mean and median (Hamey 1992).
    epochs_description, cpu_description : fastnet.stats.Description or None
        Lawrence et al. (1997)'s description of the successful trials' epochs and
        of all trials' CPU time (None with fewer than three values).
    best_in_grid : bool
        The highest peak efficiency of its parameter grid (False outside grids).
    """

    spec: str
    group: int
    epochs: np.ndarray
    success: np.ndarray
    cpu_time: np.ndarray
    diverged: np.ndarray
    traversals: np.ndarray
    flops: np.ndarray
    hamey: object
    epochs_description: object
    cpu_description: object
    best_in_grid: bool = False

    @property
    def times(self):
        """Hamey's t_i: epochs to success, failures at T."""
        return np.where(self.success, self.epochs, self.hamey.limit).astype(float)

    def costs(self, unit):
        """Each trial's time to success in `unit` (one of `COST_UNITS`), failures at the
        cost of T epochs.

        A success costs what it ran; a failure that trained to T likewise. A trial that
        stopped before T without success (it diverged) counts as T epochs at the mean
        cost per epoch of the algorithm's trials whose cost is known (NaN if none is).
        """
        if unit == "epochs":
            return self.times
        T = float(self.hamey.limit)
        spent = self.traversals if unit == "traversals" else self.cpu_time.astype(float)
        spent = np.asarray(spent, dtype=float)
        known = np.isfinite(spent) & (self.epochs > 0)
        per_epoch = (float(spent[known].sum() / self.epochs[known].sum()) if known.any()
                     else float("nan"))
        ran_to_t = (self.epochs >= T) & np.isfinite(spent)
        return np.where(self.success | ran_to_t, spent, T * per_epoch)

    def cost_per_epoch(self, unit):
        """Mean cost of one epoch in `unit` (``"traversals"``, ``"flops"`` or
        ``"CPU time"``) over the trials whose cost is known (NaN if none is)."""
        spent = {"traversals": self.traversals, "flops": self.flops,
                 "CPU time": self.cpu_time}[unit]
        spent = np.asarray(spent, dtype=float)
        known = np.isfinite(spent) & (self.epochs > 0)
        return (float(spent[known].sum() / self.epochs[known].sum()) if known.any()
                else float("nan"))

    def __repr__(self):
        h = self.hamey
        return (f"AlgorithmTrials({self.spec!r}, {h.n_successes}/{h.n_trials} successful, "
                f"T_E={h.optimal_limit:g}, e={h.peak_efficiency:.4g})")


@dataclass(frozen=True)
class LogRank:
    """A log-rank test of two algorithms' success-time distributions, censored at T.

    ``statistic`` is scipy's signed z (positive: ``a`` succeeds sooner than
    expected under equal distributions); ``pvalue`` two-sided; ``pvalue_holm`` that
    p-value adjusted by Holm's (1979) procedure over all pairs of the study
    (`fastnet.stats.holm`); ``better`` the algorithm that trains faster if
    ``pvalue_holm < alpha``, else None. ``unit`` is what the times to success are
    counted in (one of `COST_UNITS`, the study's `cost_unit`: epochs only where every
    algorithm's epoch costs the same). ``median_ratio`` is the effect size: the
    median time to success of ``a`` over that of ``b`` in ``unit``, over all K trials with
    failures counted at the cost of T epochs (below 1: ``a`` faster), with
    ``median_ratio_interval``, its
    95 % percentile bootstrap interval (2000 resamples of each algorithm's trials, drawn
    independently for each algorithm from the study's seed; the two-sample percentile
    bootstrap of :func:`scipy.stats.bootstrap`); ``median_bound`` is True when at
    most half of one algorithm's trials succeeded, so that its median is T (or
    averages with T) and the ratio is only a bound. ``curves_cross`` is the time to
    success (in ``unit``) near which the two success curves (the fraction of each
    algorithm's trials successful by a time) cross, NaN where neither leads by a clear
    margin on both sides (`success_curves_cross`); ``ahead_before`` the algorithm
    whose curve is above before it. Where the curves cross the two numbers answer
    different questions: the log-rank test weighs each time by the trials still
    running, the early times most; the median the typical trial, failures at T.
    """

    a: str
    b: str
    statistic: float
    pvalue: float
    better: str | None
    pvalue_holm: float = float("nan")
    median_ratio: float = float("nan")
    median_bound: bool = False
    median_ratio_interval: tuple = (float("nan"), float("nan"))
    unit: str = "epochs"
    curves_cross: float = float("nan")
    ahead_before: str | None = None


@dataclass(frozen=True, repr=False)
class StudyResult:
    """What `run_study` returns: the set-up, one `AlgorithmTrials` per algorithm
    and the pairwise `LogRank` tests, in the unit ``cost_unit`` (see `cost_unit`)
    for the reason ``cost_reason``."""

    study: Study
    task_name: str
    layer_sizes: tuple
    algorithms: tuple
    logrank: tuple
    alpha: float = ALPHA
    #: SHA-256 of the task's data file contents (None for the generated tasks).
    data_sha256: str | None = None
    #: The unit the log-rank tests compare times to success in (one of `COST_UNITS`).
    cost_unit: str = "epochs"
    #: Why that unit, as a sentence for the page.
    cost_reason: str = ""
    #: The rules files whose rules the study trained (:func:`fastnet.algorithms.load_rules`),
    #: each ``{"file", "sha256", "algorithms"}`` (the rules it trained).
    rules: tuple = ()

    def __repr__(self):
        return (f"StudyResult({self.task_name}, {'-'.join(map(str, self.layer_sizes))}, "
                f"{len(self.algorithms)} algorithms x {self.study.trials} trials, "
                f"T={self.study.limit})")


def logrank_test(a, b, limit, unit="epochs"):
    """The log-rank test of two `AlgorithmTrials`' times to success in ``unit`` (one of
    `COST_UNITS`; failures censored at the cost of ``limit`` epochs, see
    `AlgorithmTrials.costs`): (z, two-sided p) by :func:`scipy.stats.logrank`; NaN if
    neither has a success or a cost is unknown."""
    from scipy import stats

    def data(t, cost):
        ok = t.success & (t.epochs < limit)
        return stats.CensoredData(uncensored=cost[ok], right=cost[~ok])

    ca, cb = a.costs(unit), b.costs(unit)
    if not (a.success.any() or b.success.any()) or not (np.isfinite(ca).all()
                                                          and np.isfinite(cb).all()):
        return float("nan"), float("nan")
    r = stats.logrank(data(a, ca), data(b, cb))
    return float(r.statistic), float(r.pvalue)


#: How many standard errors one success curve must lead the other by, at some time on
#: each side, for `success_curves_cross` to call them crossing (a pointwise margin kept
#: wide: the curves are compared at every success time).
CROSSING_MARGIN = 3.0


def success_curves_cross(cost_a, success_a, cost_b, success_b, margin=CROSSING_MARGIN):
    """Where two algorithms' success curves cross.

    The success curve of an algorithm is the fraction of its trials that succeeded by
    time t. The curves cross when each leads the other, at some t, by more than
    ``margin`` standard errors of the difference of two binomial fractions,
    sqrt(Fa (1 - Fa) / Ka + Fb (1 - Fb) / Kb).

    Parameters
    ----------
    cost_a, cost_b : ndarray
        Each trial's time to success (any unit; failures anywhere).
    success_a, success_b : ndarray of bool
        Which trials succeeded.
    margin : float, default `CROSSING_MARGIN`

    Returns
    -------
    t : float
        The first success time after the earlier leader's last lead before the other's
        first clear lead (NaN: no crossing).
    a_first : bool or None
        True where a's curve leads before ``t``, False where b's does, None without a
        crossing.
    """
    a, b = np.sort(cost_a[success_a]), np.sort(cost_b[success_b])
    grid = np.unique(np.concatenate([a, b]))
    if not (a.size and b.size):
        return float("nan"), None
    fa = np.searchsorted(a, grid, side="right") / cost_a.size
    fb = np.searchsorted(b, grid, side="right") / cost_b.size
    d = fa - fb
    se = np.sqrt(fa * (1 - fa) / cost_a.size + fb * (1 - fb) / cost_b.size)
    ahead, behind = d > margin * se, d < -margin * se
    if not (ahead.any() and behind.any()):
        return float("nan"), None
    a_first = int(np.argmax(ahead)) < int(np.argmax(behind))
    later = int(np.argmax(behind if a_first else ahead))      # the other's first clear lead
    led = np.flatnonzero((d[:later] > 0) if a_first else (d[:later] < 0))
    return float(grid[int(led[-1]) + 1]), a_first


def _per_epoch(values, epochs):
    """Each trial's cost per epoch (trials of at least one epoch whose cost is known)."""
    values = np.asarray(values, dtype=float)
    ok = np.isfinite(values) & (epochs > 0)
    return values[ok] / epochs[ok]


def cost_unit(algorithms, choice="auto"):
    """The unit in which a study compares its algorithms' times to success, and why.

    Epochs compare only where they cost the same: an epoch of Levenberg-Marquardt or of
    scaled conjugate gradients is not an epoch of RPROP. So the unit is

    * ``"epochs"`` if every trial of every algorithm spent the same number of connection
      traversals per epoch (Prechelt 1994's count) and no algorithm works outside them;
    * ``"traversals"`` if epochs cost different numbers of traversals, but the traversals
      count all the work (every forward and backward pass, every weight vector formed);
    * ``"CPU time"`` if an algorithm also works outside the traversals (the normal
      equations of Levenberg-Marquardt, whose floating-point operations no traversal
      count holds): then only the CPU time counts all of it.

    ``choice`` ``"traversals"`` or ``"cpu"`` takes that unit whatever the epochs cost
    (the reason then says what it leaves out).

    Parameters
    ----------
    algorithms : sequence of AlgorithmTrials
    choice : {"auto", "traversals", "cpu"}, default "auto"
        `Study.cost`.

    Returns
    -------
    unit : str
        One of `COST_UNITS`.
    reason : str
        Why, as a sentence naming the costs per epoch.

    References
    ----------
    .. [1] L. Prechelt, "PROBEN1 - A set of neural network benchmark problems and
       benchmarking rules", Technical Report 21/94, Universitaet Karlsruhe, 1994,
       Section 3.3 (connection traversals).
    """
    from fastnet._validation import check_choice

    check_choice(choice, "choice", ("auto", "traversals", "cpu"))
    outside = [a for a in algorithms if np.nansum(a.flops) > 0]
    names = ", ".join(f"{a.spec} ({a.cost_per_epoch('flops'):,.0f} per epoch)"
                      for a in outside)
    if choice == "cpu":
        return "CPU time", ("chosen (cost cpu): the CPU time of this implementation on this "
                            "machine, all work included.")
    if choice == "traversals":
        left_out = ("" if not outside else " They leave out the floating-point operations "
                    f"some algorithms do besides ({names}).")
        return "traversals", ("chosen (cost traversals): Prechelt 1994's count of the work "
                              "(forward, backward and update)." + left_out)
    if outside:
        return "CPU time", ("some algorithms also work outside the connection traversals "
                            "(floating-point operations of their own, e.g. normal equations: "
                            f"{names}), which only the CPU time counts.")
    rates = [_per_epoch(a.traversals, a.epochs) for a in algorithms]
    every = np.concatenate(rates) if rates else np.empty(0)
    if not every.size:
        return "epochs", "no trial's cost in connection traversals is known."
    if every.min() == every.max():
        return "epochs", (f"every epoch of every algorithm costs the same {every[0]:,.0f} "
                          "connection traversals.")
    names = ", ".join(f"{a.spec} {a.cost_per_epoch('traversals'):,.0f}" for a in algorithms)
    return "traversals", ("epochs cost different numbers of connection traversals "
                          f"(per epoch, mean: {names}); traversals (Prechelt 1994's count of "
                          "the work: forward, backward and update) compare across "
                          "algorithms, epochs do not.")


def _network(study, n_in, n_out, default_hidden):
    from fastnet.network import MLP

    hidden = default_hidden if study.network is None else parse_network(study.network, n_in, n_out)
    return MLP(n_in, hidden, n_out, shortcut=study.shortcut,
               hidden_activation=study.hidden_activation,
               output_activation=study.output_activation, dtype=study.dtype)


def _describe(x):
    from fastnet.stats import describe

    x = np.asarray(x, dtype=float)
    return describe(x, lilliefors=False) if x.size >= 3 else None


def _analyse(study, spec, group, data):
    from fastnet.stats import hamey_analysis

    epochs, success, cpu, diverged, traversals, flops = data
    success = success & (epochs < study.limit)
    times = np.where(success, epochs, study.limit).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)    # (a degenerate fit's arithmetic)
        hamey = hamey_analysis(times, study.limit)
    return AlgorithmTrials(spec, group, epochs, success, cpu, diverged, traversals, flops,
                           hamey, _describe(epochs[success]), _describe(cpu))


def run_study(study: Study, out: str | os.PathLike | None = None, *, root=None,
              progress=None, pictures: bool = True, n_jobs: int = 1,
              scheduler=None) -> StudyResult:
    """Run a timing study (Hamey 1992): every algorithm's K trials, then the measures.

    The K trials of each algorithm train in chunks of at most
    :data:`fastnet.study.CHUNK_TRIALS` trials, each chunk in one
    :func:`fastnet.train_many` call; a trial's initial weights (and own seed) depend only
    on the study's seed and the trial's index, so a trial trains alike whatever the
    chunks run on (this process, ``n_jobs`` processes, a Dask cluster) and whether the
    study was interrupted; only CPU times differ.

    Parameters
    ----------
    study : Study
    out : path, optional
        Output directory: each finished chunk of trials is written there atomically
        (``trials/<hash>/<lo>-<hi>.npz``, the hash naming the set-up and the algorithm)
        under a lock, and a rerun reuses them (resuming where a killed study stopped);
        at the end the page ``study.html``, ``trials.csv``, ``study.json`` and
        ``summary.md`` (see :func:`fastnet.study.write_study`). It must be absent, empty
        or a study's directory (it holds the marker file ``.fastnet-study`` the study
        writes first), so that no other files are overwritten.
    root : path, optional
        Proben1 data directory (a Proben1 task).
    progress : callable, optional
        ``progress(line)`` with a line per algorithm started, per chunk finished (trials
        done of K and an ETA) and per algorithm finished: each line a
        :class:`~fastnet.study.StudyProgress`, a ``str`` carrying these numbers.
    pictures : bool, default True
        Draw the graphs into the page (needs matplotlib).
    n_jobs : int, default 1
        Local worker processes (joblib ``loky``), -1 for every core; the workers exit
        when this process dies. Ignored with ``scheduler``.
    scheduler : str or dask.distributed.Client, optional
        Train the chunks on a Dask cluster (an address such as ``"tcp://host:8786"``);
        its workers need fastnet (and a Proben1 task's data is sent with each chunk).

    Returns
    -------
    StudyResult

    Raises
    ------
    FileLockedError
        If another process is writing into ``out``.
    ValueError, TypeError
        For a bad task, network, algorithm or ``n_jobs`` (naming it); for an ``out``
        that is empty (``""``) or a directory holding other files than a study's; and for a
        chunk file in ``out`` that does not read, holds trials of another set-up or
        differs from its digest.
    ConnectionError
        If the Dask scheduler cannot be reached.

    Notes
    -----
    An algorithm of a rules file (:func:`fastnet.algorithms.load_rules`) trains on every
    back-end: each chunk carries the file's bytes to its worker, which loads them
    before reading the algorithm. The file's SHA-256 joins the algorithm's hash (its
    folder ``trials/<hash>``), so that an edited file trains again instead of resuming.
    """
    from fastnet._files import exclusive_lock, refuse_other_dtype
    from fastnet.study._schedule import check_jobs

    if not isinstance(study, Study):
        raise TypeError(f"`study` must be a fastnet.study.Study, got {type(study).__name__}.")
    n_jobs = check_jobs(n_jobs, scheduler)
    name, X, Y, hidden, sha = load_task(study.task, root)
    net = _network(study, X.shape[1], Y.shape[1], hidden)
    say = progress if progress is not None else (lambda line: None)
    where = (n_jobs, scheduler)
    if out is None:
        return _run(study, name, net, X, Y, sha, None, say, where)
    from fastnet._files import mark_output_directory
    from fastnet.study._write import write_study

    out = _check_out(out)                  # refused before training, not after
    mark_output_directory(out, STUDY_MARKER, MARKER_TEXT)
    with exclusive_lock(out / "study.json"):
        refuse_other_dtype(out, "study", "study", study.dtype)
        result = _run(study, name, net, X, Y, sha, out, say, where)
        write_study(result, out, pictures=pictures)
    return result


#: The file that marks a directory as a study's output directory: `run_study` writes into a
#: directory that is absent, empty or holds it (or a study written before it existed).
STUDY_MARKER = ".fastnet-study"
MARKER_TEXT = ("This directory holds a fastnet timing study (fastnet study, "
               "fastnet.study.run_study): its trials, tables and page. fastnet writes a study "
               "into a directory that is empty or holds this file.\n")


def _check_out(out):
    """``out`` as a Path, if a study may write there (`fastnet._files.output_directory`:
    not an empty path; absent, empty, or a study's, by `STUDY_MARKER` or `_earlier_study`);
    else a ValueError saying why, before anything is written."""
    from fastnet._files import output_directory
    from fastnet.study._write import OUTPUTS

    return output_directory(out, kind="study", marker=STUDY_MARKER, folder="trials",
                            outputs=OUTPUTS, earlier=_earlier_study, example="xor-study")


def _earlier_study(out):
    """Whether ``out`` holds a study written before `STUDY_MARKER`: a ``study.json`` with
    its set-up, or trials (``trials/<16 hex digits>/<lo>-<hi>.npz`` chunks, or the
    ``trials/<16 hex digits>.json`` of an algorithm, as studies wrote before chunks)."""
    import re

    from fastnet._files import json_record_has

    if json_record_has(out / "study.json", "study"):
        return True
    try:
        for name in os.listdir(out / "trials"):
            path = out / "trials" / name
            if re.fullmatch(r"[0-9a-f]{16}\.json", name) and path.is_file():
                return True
            if re.fullmatch(r"[0-9a-f]{16}", name) and path.is_dir() and any(
                    re.fullmatch(r"[0-9]{9}-[0-9]{9}\.npz", f) for f in os.listdir(path)):
                return True
    except OSError:
        pass
    return False


def _run(study, name, net, X, Y, sha, out, say, where):
    from fastnet.study._schedule import train_all
    from fastnet.training._rules_files import rules_records

    trained = train_all(study, net, X, Y, sha, out, say, *where)
    cells = [_analyse(study, spec, group, data)
             for spec, group, data in zip(study.algorithms, study.groups, trained)]
    cells = _mark_best(cells)
    unit, why = cost_unit(cells, study.cost)
    return StudyResult(study, name, net.layer_sizes, tuple(cells),
                       _logrank_tests(cells, study.limit, seed=study.seed, unit=unit),
                       data_sha256=sha, cost_unit=unit, cost_reason=why,
                       rules=rules_records(study.algorithms))


def _logrank_tests(cells, limit, alpha=ALPHA, seed=0, unit="epochs"):
    """Every pair's log-rank test in `unit`, Holm-adjusted over the pairs, with the ratio
    of medians."""
    from fastnet.stats import holm

    pairs = [(i, j) for i in range(len(cells)) for j in range(i + 1, len(cells))]
    raw = [logrank_test(cells[i], cells[j], limit, unit) for i, j in pairs]
    costs = [c.costs(unit) for c in cells]
    medians = ([_resampled_medians(c, seed, k) for k, c in enumerate(costs)] if pairs
               else [])
    adjusted = holm([p for _, p in raw]) if raw else []
    tests = []
    for (i, j), (z, p), q in zip(pairs, raw, adjusted):
        better = None
        if np.isfinite(q) and q < alpha:
            better = cells[i].spec if z > 0 else cells[j].spec
        ma, mb = float(np.median(costs[i])), float(np.median(costs[j]))
        # with at most half the trials successful, a median is (or averages with) T
        bound = any(2 * np.count_nonzero(c.times < limit) <= c.times.size
                    for c in (cells[i], cells[j]))
        ok = [c.success & (c.epochs < limit) for c in (cells[i], cells[j])]
        cross, a_first = success_curves_cross(costs[i], ok[0], costs[j], ok[1])
        tests.append(LogRank(cells[i].spec, cells[j].spec, z, p, better, pvalue_holm=float(q),
                             median_ratio=ma / mb, median_bound=bound,
                             median_ratio_interval=_ratio_interval(medians[i], medians[j]),
                             unit=unit, curves_cross=cross,
                             ahead_before=None if a_first is None
                             else (cells[i] if a_first else cells[j]).spec))
    return tuple(tests)


def _mark_best(cells):
    """Mark the highest peak efficiency of each parameter grid (groups of two or more);
    none when no cell of the grid had a success."""
    import dataclasses

    out = list(cells)
    for g in {c.group for c in cells}:
        members = [i for i, c in enumerate(cells) if c.group == g]
        if len(members) < 2:
            continue
        scores = [cells[i].hamey.peak_efficiency if cells[i].hamey.n_successes else -np.inf
                  for i in members]                  # (no success: no best cell)
        scores = [s if np.isfinite(s) else -np.inf for s in scores]
        if max(scores) > -np.inf:
            best = members[int(np.argmax(scores))]
            out[best] = dataclasses.replace(cells[best], best_in_grid=True)
    return out
