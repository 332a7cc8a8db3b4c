"""Where a study's chunks train (this process, local worker processes or a Dask cluster),
what is kept of them (columns of K numbers per algorithm), and the progress lines."""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from fastnet.study._chunks import chunk_bounds, chunk_path, load_chunk, save_chunk, train_chunk

__all__ = ["StudyProgress", "train_all", "check_jobs"]


class StudyProgress(str):
    """A progress line of :func:`fastnet.study.run_study` (a ``str``), with its numbers.

    Attributes
    ----------
    index, n_algorithms : int
        The algorithm's place (from 1) among the study's.
    algorithm : str
    done, trials : int
        Trials of the algorithm finished (resumed ones included) and its K.
    elapsed : float
        Wall seconds since the algorithm's first chunk of this run started.
    eta : float
        Wall seconds left for the algorithm at its rate so far (NaN before one chunk).
    kind : {"resumed", "start", "chunk", "end"}
        Trials found in the output directory, the algorithm's training starting, a chunk
        finished (an interim count), the algorithm finished (its successes).
    """

    def __new__(cls, line, *, index, n_algorithms, algorithm, done, trials, elapsed=0.0,
                eta=float("nan"), kind="chunk"):
        self = super().__new__(cls, line)
        self.index, self.n_algorithms, self.algorithm = index, n_algorithms, algorithm
        self.done, self.trials, self.elapsed, self.eta, self.kind = (done, trials, elapsed,
                                                                     eta, kind)
        return self


def _hms(seconds):
    if not math.isfinite(seconds):
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def check_jobs(n_jobs, scheduler):
    """``n_jobs`` checked (1 to MAX_JOBS, or -1 for every core) and a scheduler address
    checked before anything is made."""
    from fastnet._validation import check_int
    from fastnet.experiment import MAX_JOBS

    n_jobs = check_int(n_jobs, "n_jobs")
    if n_jobs != -1 and not 1 <= n_jobs <= MAX_JOBS:
        raise ValueError(f"`n_jobs` must be from 1 to {MAX_JOBS} or -1 (every core), got "
                         f"{n_jobs}.")
    if isinstance(scheduler, str):
        from fastnet.experiment._runner import _check_address

        _check_address(scheduler)
    return n_jobs


class _Columns:
    """One algorithm's K trials as columns (no object per trial)."""

    def __init__(self, K):
        self.epochs, self.success = np.zeros(K, np.intp), np.zeros(K, bool)
        self.cpu, self.diverged = np.zeros(K), np.zeros(K, bool)
        self.traversals, self.flops = np.full(K, np.nan), np.full(K, np.nan)
        self.done = 0

    def put(self, lo, hi, data):
        for column, values in zip(self.data, data):
            column[lo:hi] = values
        self.done += hi - lo

    @property
    def data(self):
        return (self.epochs, self.success, self.cpu, self.diverged, self.traversals,
                self.flops)


def train_all(study, net, X, Y, sha, out, say, n_jobs=1, scheduler=None):
    """Every algorithm's K trials as ``(epochs, success, cpu_time, diverged, traversals,
    flops)`` columns, in algorithm order: the chunks found in ``out`` read back, the others
    trained (in this process, ``n_jobs`` local processes or on ``scheduler``) and written
    there as each finishes."""
    import joblib

    from fastnet.experiment._workers import joblib_backend

    K, T = study.trials, study.limit
    bounds = chunk_bounds(K, T)
    cols = [_Columns(K) for _ in study.algorithms]
    todo = []
    for k, spec in enumerate(study.algorithms):
        folder = None if out is None else Path(out) / "trials" / study.cell_hash(spec, sha)
        for lo, hi in bounds:
            data = (None if folder is None
                    else load_chunk(chunk_path(folder, lo, hi), study, spec, sha, lo, hi))
            if data is None:
                todo.append((k, lo, hi))
            else:
                cols[k].put(lo, hi, data)
    clock = _Clock(study, cols, say, sorted({k for k, _, _ in todo}))
    for k, spec in enumerate(study.algorithms):
        if cols[k].done:
            say(clock.line(k, f"{cols[k].done}/{K} trials already in trials/"
                              f"{study.cell_hash(spec, sha)}/", kind="resumed"))
    if not todo:
        return [c.data for c in cols]
    clock.begin(todo[0][0])
    from fastnet.training._rules_files import rules_of

    # (a rule of a rules file travels as the file's bytes: a worker process or a Dask
    # worker loads it before reading the algorithm)
    rules = [rules_of([spec]) for spec in study.algorithms]
    backend, config, client = joblib_backend(n_jobs, scheduler, len(todo))
    try:
        with joblib.parallel_config(**config):
            results = joblib.Parallel(return_as="generator_unordered", batch_size=1)(
                joblib.delayed(_chunk_task)(study, k, net, X, Y, lo, hi, rules[k])
                for k, lo, hi in todo)
            for k, lo, hi, data in results:
                spec = study.algorithms[k]
                if out is not None:
                    folder = Path(out) / "trials" / study.cell_hash(spec, sha)
                    save_chunk(chunk_path(folder, lo, hi), study, spec, sha, lo, hi, data)
                cols[k].put(lo, hi, data)
                clock.advance(k, hi - lo)
    finally:
        if client is not None:
            client.close()
    return [c.data for c in cols]


def _chunk_task(study, k, net, X, Y, lo, hi, rules=()):
    from fastnet.training._rules_files import ensure_loaded

    ensure_loaded(rules)
    lo, hi, data = train_chunk(study, study.algorithms[k], net, X, Y, lo, hi)
    return k, lo, hi, data


class _Clock:
    """Trials done per algorithm, and its ETA at its own rate so far (wall time since
    the previous algorithm's last chunk, or the start)."""

    def __init__(self, study, cols, say, order):
        self.study, self.cols, self.say, self.order = study, cols, say, order
        self.start = [None] * len(cols)
        self.trained = [0] * len(cols)

    def line(self, k, what, kind="chunk"):
        n, spec = len(self.cols), self.study.algorithms[k]
        elapsed = 0.0 if self.start[k] is None else time.perf_counter() - self.start[k]
        left = self.study.trials - self.cols[k].done
        eta = (elapsed / self.trained[k] * left if self.trained[k] else
               (0.0 if not left else float("nan")))
        return StudyProgress(f"study: [{k + 1}/{n}] {spec}: {what}", index=k + 1,
                             n_algorithms=n, algorithm=spec, done=self.cols[k].done,
                             trials=self.study.trials, elapsed=elapsed, eta=eta, kind=kind)

    def begin(self, k):
        """Algorithm ``k`` starts training (after the previous one's last chunk)."""
        if self.start[k] is None:
            self.start[k] = time.perf_counter()
            left = self.study.trials - self.cols[k].done
            self.say(self.line(k, f"training {left} trials ...", kind="start"))

    def advance(self, k, count):
        self.begin(k)
        self.trained[k] += count
        c, K, T = self.cols[k], self.study.trials, self.study.limit
        if c.done < K:
            p = self.line(k, "")                 # (its elapsed time and ETA)
            self.say(self.line(k, f"{c.done:,}/{K:,} trials  elapsed {_hms(p.elapsed)}  "
                                  f"ETA {_hms(p.eta)}"))
            return
        ok = np.count_nonzero(c.success & (c.epochs < T))       # as the tables count
        self.say(self.line(k, f"{ok}/{K} successful, {float(np.sum(c.cpu)):.1f} s CPU",
                           kind="end"))
        later = [j for j in self.order if j > k and self.cols[j].done < K]
        if later:
            self.begin(later[0])
