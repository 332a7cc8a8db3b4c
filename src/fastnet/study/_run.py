"""Running a study: each algorithm's K trials (through `fastnet.train_many`), resumable per
algorithm, then Hamey's measures, Lawrence's descriptions and log-rank tests."""
from __future__ import annotations

import json
import math
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fastnet.study._setup import Study, load_task, parse_network

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
    averages with T) and the ratio is only a bound.
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
               output_activation=study.output_activation)


def _train(study, net, X, Y, spec):
    """(epochs, success, cpu_time, diverged, traversals, flops) of one algorithm's K
    trials: in one `train_many` call; after a divergence, every trial alone
    (`fastnet.train` from the same initial weights), the diverged ones failures at T
    (their traversals and flops NaN: the error holds no count)."""
    from fastnet.algorithms import from_spec
    from fastnet.exceptions import DivergenceError, NoConvergenceWarning
    from fastnet.training import train, train_many
    from fastnet.training import draw_trials

    algorithm, stop, K, T = from_spec(spec), study.criterion(), study.trials, study.limit
    kw = dict(algorithm=algorithm, stop=stop, strip=1, max_epochs=T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)     # failures are data
        try:
            r = train_many(net, X, Y, n_trials=K, seed=study.seed, init_scale=study.init_scale,
                           **kw)
            counts = [r[i].traversals for i in range(K)]
            return (r.epochs.copy(), np.array(r.stop_reason) == stop.name, r.cpu_time.copy(),
                    np.zeros(K, bool), np.array([c.training for c in counts], float),
                    np.array([c.flops for c in counts], float))
        except DivergenceError:
            pass
        W, _ = draw_trials(net, K, study.seed, study.init_scale)
        seeds = np.random.SeedSequence(study.seed).spawn(K) if algorithm.draws else [None] * K
        epochs, success = np.full(K, T, np.intp), np.zeros(K, bool)
        cpu, diverged = np.zeros(K), np.zeros(K, bool)
        traversals, flops = np.full(K, np.nan), np.full(K, np.nan)
        for i in range(K):
            c0 = time.process_time()
            try:
                one = train(net.copy().set_weights(W[i]), X, Y, seed=seeds[i], **kw)
                epochs[i], success[i] = one.epochs, one.stop_reason == stop.name
                traversals[i], flops[i] = one.traversals.training, one.traversals.flops
            except DivergenceError as exc:
                epochs[i], diverged[i] = exc.epoch, True
            cpu[i] = time.process_time() - c0
        return epochs, success, cpu, diverged, traversals, flops


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


def _cell_path(out, study, spec, data_sha256):
    return Path(out) / "trials" / f"{study.cell_hash(spec, data_sha256)}.json"


def _load_cell(path, study, spec, data_sha256):
    """A finished algorithm's trials from its file: None if absent; a ValueError naming
    the file if it does not parse or holds trials this set-up cannot have (another
    set-up, edited by hand: a trial's epochs outside 0..T, a flag not 0 or 1, a negative
    or non-finite CPU time, a count other than K). A file written before studies
    counted traversals (without ``traversals``) is None too: trained again."""
    from fastnet._files import read_json_record

    d = read_json_record(path, "a study's trials file", "train that algorithm again")
    if d is None:
        return None
    K, T = study.trials, study.limit

    def column(key, dtype, ok):
        v = d.get(key) if isinstance(d, dict) else None
        if (not isinstance(v, list) or len(v) != K
                or not all(type(x) in (int, float, type(None)) and ok(x) for x in v)):
            raise ValueError(f"{path}: `{key}` must be {K} values ({ok.__doc__}), as this "
                             f"study writes them; delete the file to train that algorithm "
                             "again.")
        return np.array([np.nan if x is None else x for x in v], dtype)

    def epoch(x):
        """integers from 0 to the epoch limit"""
        return type(x) is int and 0 <= x <= T

    def flag(x):
        """0 or 1"""
        return type(x) is int and x in (0, 1)

    def seconds(x):
        """finite seconds, not negative"""
        return math.isfinite(x) and x >= 0

    def count(x):
        """whole numbers, not negative, or null where unknown"""
        return x is None or (type(x) is int and x >= 0)

    if not isinstance(d, dict) or d.get("hash") != path.stem or d.get("algorithm") != spec \
            or d.get("identity") != study.identity(data_sha256):
        raise ValueError(f"{path}: not the trials of {spec!r} in this study's set-up (its "
                         "hash, algorithm or set-up differ from the file's name); delete it "
                         "to train that algorithm again.")
    if "traversals" not in d or "flops" not in d:
        return None                           # (written before traversals were kept)
    return (column("epochs", np.intp, epoch), column("success", bool, flag),
            column("cpu_time", float, seconds), column("diverged", bool, flag),
            column("traversals", float, count), column("flops", float, count))


def _save_cell(path, study, spec, data_sha256, data):
    from fastnet._files import atomic_write

    epochs, success, cpu, diverged, traversals, flops = data

    def counts(v):
        return [int(x) if np.isfinite(x) else None for x in v]

    record = {"identity": study.identity(data_sha256), "algorithm": spec,
              "hash": study.cell_hash(spec, data_sha256),
              "epochs": epochs.tolist(), "success": success.astype(int).tolist(),
              "cpu_time": cpu.tolist(), "diverged": diverged.astype(int).tolist(),
              "traversals": counts(traversals), "flops": counts(flops)}
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, [json.dumps(record).encode("utf-8")])


def run_study(study: Study, out: str | os.PathLike | None = None, *, root=None,
              progress=None, pictures: bool = True) -> StudyResult:
    """Run a timing study (Hamey 1992): every algorithm's K trials, then the measures.

    Parameters
    ----------
    study : Study
    out : path, optional
        Output directory: each finished algorithm's trials are written there
        atomically (``trials/<hash>.json``) under a lock, and a rerun reuses them
        (resuming); at the end the page ``study.html``, ``trials.csv``,
        ``study.json`` and ``summary.md`` (see :func:`fastnet.study.write_study`).
    root : path, optional
        Proben1 data directory (a Proben1 task).
    progress : callable, optional
        ``progress(line)`` with a line per algorithm started and finished.
    pictures : bool, default True
        Draw the graphs into the page (needs matplotlib).

    Returns
    -------
    StudyResult

    Raises
    ------
    FileLockedError
        If another process is writing into ``out``.
    ValueError, TypeError
        For a bad task, network or algorithm (naming it).
    """
    from fastnet._files import exclusive_lock

    if not isinstance(study, Study):
        raise TypeError(f"`study` must be a fastnet.study.Study, got {type(study).__name__}.")
    name, X, Y, hidden, sha = load_task(study.task, root)
    net = _network(study, X.shape[1], Y.shape[1], hidden)
    say = progress if progress is not None else (lambda line: None)
    if out is None:
        return _run(study, name, net, X, Y, sha, None, say)
    out = Path(os.fspath(out))
    out.mkdir(parents=True, exist_ok=True)
    from fastnet.study._write import OUTPUTS, write_study

    for what in ("trials",) + OUTPUTS:     # refused before training, not after
        p = out / what
        if os.path.lexists(p) and not (p.is_dir() if what == "trials" else p.is_file()):
            kind = "a directory" if what == "trials" else "a regular file"
            raise ValueError(f"`out` {str(out)!r}: {p} must be {kind} (or absent), as the "
                             "study writes it; move it away.")
    with exclusive_lock(out / "study.json"):
        result = _run(study, name, net, X, Y, sha, out, say)
        write_study(result, out, pictures=pictures)
    return result


def _run(study, name, net, X, Y, sha, out, say):
    cells = []
    n = len(study.algorithms)
    for k, (spec, group) in enumerate(zip(study.algorithms, study.groups), 1):
        path = _cell_path(out, study, spec, sha) if out is not None else None
        data = _load_cell(path, study, spec, sha) if path is not None else None
        if data is not None:
            say(f"study: [{k}/{n}] {spec}: {study.trials} trials already in {path.name}")
        else:
            say(f"study: [{k}/{n}] {spec}: training {study.trials} trials ...")
            t0 = time.process_time()
            data = _train(study, net, X, Y, spec)
            if path is not None:
                _save_cell(path, study, spec, sha, data)
            ok = np.count_nonzero(data[1] & (data[0] < study.limit))  # as _analyse counts
            say(f"study: [{k}/{n}] {spec}: {ok}/{study.trials} "
                f"successful, {time.process_time() - t0:.1f} s CPU")
        cells.append(_analyse(study, spec, group, data))
    cells = _mark_best(cells)
    unit, why = cost_unit(cells, study.cost)
    return StudyResult(study, name, net.layer_sizes, tuple(cells),
                       _logrank_tests(cells, study.limit, seed=study.seed, unit=unit),
                       data_sha256=sha, cost_unit=unit, cost_reason=why)


#: Resamples of the bootstrap interval of a ratio of medians.
BOOTSTRAP_RESAMPLES = 2000


def _resampled_medians(times, seed, k):
    """Medians of `BOOTSTRAP_RESAMPLES` resamples (with replacement) of one algorithm's
    trial times, from a stream of its own (the study's seed and its index `k`)."""
    rng = np.random.default_rng([seed, k])
    draws = rng.integers(0, times.size, size=(BOOTSTRAP_RESAMPLES, times.size))
    return np.median(times[draws], axis=1)


def _ratio_interval(medians_a, medians_b, level=0.95):
    """Percentile interval of the ratio of two algorithms' resampled medians: the
    two-sample percentile bootstrap (each algorithm's trials resampled on their own, as
    scipy.stats.bootstrap does with ``paired=False``), with every algorithm's resampled
    medians drawn once for all its pairs."""
    q = 100 * (1 - level) / 2
    lo, hi = np.percentile(medians_a / medians_b, [q, 100 - q])
    return float(lo), float(hi)


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
        tests.append(LogRank(cells[i].spec, cells[j].spec, z, p, better, pvalue_holm=float(q),
                             median_ratio=ma / mb, median_bound=bound,
                             median_ratio_interval=_ratio_interval(medians[i], medians[j]),
                             unit=unit))
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
