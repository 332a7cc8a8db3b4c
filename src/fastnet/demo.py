"""A small timing study on generated tasks (no data download): ``fastnet demo``.

Three tasks, each trained from many initialisations in one `train_rprop_many`
call: Hamey's (1992) success studies on XOR 2-2-1 and a 10-5-10 encoder
(success = every output right by the 40-20-40 rule) and Lawrence et al.'s
(1997) teacher task with GL5 early stopping.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from fastnet._validation import check_int

__all__ = ["DemoResult", "DemoRow", "run_demo", "DEMO_BATCH"]

#: Runs of a task trained per `train_rprop_many` call. A trial's result does not
#: depend on the batching (each is what `train_rprop` gives on its own); batches
#: let `run_demo` report progress, and their CPU times add up to the task's.
DEMO_BATCH = 50


@dataclass(frozen=True)
class DemoRow:
    """One task of the demo.

    Attributes
    ----------
    task : str
    runs : int
    stopped : int
        Runs that stopped by their criterion (success / GL5), not the epoch limit.
    median_epochs : float
    median_test_error : float or None
        Median squared error percentage on the test set; None for tasks judged on
        their training set (XOR, encoder).
    cpu_time : float
        CPU seconds of the batch.
    traversals : int
        Connection traversals of all runs.
    """

    task: str
    runs: int
    stopped: int
    median_epochs: float
    median_test_error: float | None
    cpu_time: float
    traversals: int

    def traversals_per_cpu_second(self) -> float:
        """Traversals divided by CPU seconds (inf if the time is 0)."""
        return self.traversals / self.cpu_time if self.cpu_time > 0 else float("inf")


@dataclass(frozen=True)
class DemoResult:
    """What `run_demo` measured.

    Attributes
    ----------
    runs, seed : int
        Runs per task and master seed.
    rows : tuple of DemoRow
    """

    runs: int
    seed: int
    rows: tuple

    def __repr__(self):
        return f"DemoResult({len(self.rows)} tasks, {self.runs} runs each, seed {self.seed})"

    def summary(self) -> str:
        """The demo's table as text."""
        lines = [f"fastnet demo: {self.runs} RPROP runs per task (train_rprop_many), "
                 f"master seed {self.seed}",
                 f"{'task':36s} {'runs':>4s} {'stopped':>7s} {'median epochs':>13s} "
                 f"{'median test E':>13s} {'CPU s':>7s} {'traversals/CPU s':>17s}"]
        for r in self.rows:
            err = "-" if r.median_test_error is None else f"{r.median_test_error:.3f}"
            lines.append(f"{r.task:36s} {r.runs:4d} {r.stopped:7d} {r.median_epochs:13.0f} "
                         f"{err:>13s} {r.cpu_time:7.3f} {r.traversals_per_cpu_second():17.3g}")
        lines.append("stopped = runs that stopped by their criterion (success by the 40-20-40 "
                     "rule, or GL5) before the epoch limit; test E = squared error percentage "
                     "(Prechelt 1994); '-' = judged on the training set. A noise-free teacher "
                     "is seldom overfitted, so GL5 seldom fires there (Lawrence et al. 1997).")
        return "\n".join(lines)


def run_demo(runs: int = 20, seed: int = 0, *, progress=None) -> DemoResult:
    """Run the demo's three small timing studies.

    Parameters
    ----------
    runs : int, default 20
        Trials per task (>= 1), trained in batches of `DEMO_BATCH`.
    seed : int, default 0
        Master seed; each task's trials get seeds spawned from it.
    progress : callable, optional
        ``progress(task, i_task, n_tasks, done, runs)`` before each task starts
        (``done=0``) and after each of its batches (``fastnet demo`` prints it on
        stderr). Its return value is ignored.

    Returns
    -------
    DemoResult

    Examples
    --------
    >>> res = run_demo(runs=2, seed=0)
    >>> [r.runs for r in res.rows]
    [2, 2, 2]
    """
    from fastnet._many import train_rprop_many
    from fastnet.network import MLP
    from fastnet.datasets import make_encoder, make_teacher, make_xor
    from fastnet.exceptions import NoConvergenceWarning
    from fastnet.stopping import GL, Correct, MaxEpochs

    runs = check_int(runs, "runs", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    if progress is not None and not callable(progress):
        raise TypeError(f"`progress` must be callable or None, got {progress!r}.")
    seeds = np.random.SeedSequence(seed).spawn(3)
    n_tasks = 3

    def study(i_task, task, data, make_net, **kw):
        X, T = data.train
        val = data.val if data.val is not None else (None, None)
        test = {"X_test": data.test[0], "Y_test": data.test[1]} if data.test is not None else {}
        trial_seeds = seeds[i_task - 1].spawn(runs)
        results, cpu_time = [], 0.0
        if progress is not None:
            progress(task, i_task, n_tasks, 0, runs)
        for start in range(0, runs, DEMO_BATCH):
            batch_seeds = trial_seeds[start:start + DEMO_BATCH]
            with warnings.catch_warnings():
                # Failed trials are part of the measurement here (Hamey), not a problem.
                warnings.simplefilter("ignore", NoConvergenceWarning)
                batch = train_rprop_many([make_net() for _ in batch_seeds], X, T, *val,
                                         seeds=batch_seeds, **test, **kw)
            results.extend(batch)
            cpu_time += batch[0].setup["batch"]["cpu_time"]
            if progress is not None:
                progress(task, i_task, n_tasks, len(results), runs)
        errors = [r.final_test.squared_error_percentage for r in results
                  if r.final_test is not None]
        return DemoRow(
            task=task, runs=runs,
            stopped=sum(r.stop_reason in ("correct", "GL5") for r in results),
            median_epochs=float(np.median([r.epochs for r in results])),
            median_test_error=float(np.median(errors)) if errors else None,
            cpu_time=cpu_time,
            traversals=sum(r.traversals.total for r in results))

    rows = (
        study(1, "XOR 2-2-1 (success = correct)", make_xor(),
              lambda: MLP(2, (2,), 1, shortcut=False, hidden_activation="tanh",
                          output_activation="logistic"),
              stop=Correct(0.4), strip=1, max_epochs=1000, init_scale=1.0),
        study(2, "encoder 10-5-10 (success = correct)", make_encoder(10, 5),
              lambda: MLP(10, (5,), 10, shortcut=False, hidden_activation="tanh",
                          output_activation="logistic"),
              stop=Correct(0.4), strip=1, max_epochs=1000, init_scale=1.0),
        study(3, "teacher K=5, 5-5-1 (GL5 early stop)",
              make_teacher(K=5.0, n_train=500, n_val=250, n_test=2000, seed=seed),
              lambda: MLP(5, (5,), 1, shortcut=False, hidden_activation="tanh"),
              stop=GL(5) | MaxEpochs(2000), max_epochs=2000, init_scale=0.5),
    )
    return DemoResult(runs=runs, seed=seed, rows=rows)


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
