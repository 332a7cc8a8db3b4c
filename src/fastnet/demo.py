"""Three small success studies on generated tasks (no data download): ``fastnet demo``.

Each task is trained from many random initialisations in `train_rprop_many`
calls, each run until it reaches the task's goal or its epoch budget, as in
Hamey's (1992) success studies: XOR 2-2-1 with shortcut connections and a 10-5-10
encoder without (goal: every output right by the 40-20-40 rule) and Lawrence et al.'s
(1997) teacher task, a 5-5-1 student learning a random 5-5-1 teacher (goal: a validation
NMSE below `TEACHER_GOAL_NMSE`). Each task's name says its network as it is built (its
layer sizes, and "with shortcuts" where it has them): XOR 2-2-1 with shortcuts succeeds far
more often than the 2-2-1 network without them that ``fastnet study xor`` trains.
"""
from __future__ import annotations

import textwrap
import warnings
from dataclasses import dataclass

import numpy as np

from fastnet._validation import check_int

__all__ = ["DemoResult", "DemoRow", "run_demo", "DEMO_BATCH", "TEACHER_GOAL_NMSE"]

#: Runs of a task trained per `train_rprop_many` call. A trial's result does not
#: depend on the batching (each is what `train_rprop` gives on its own); batches
#: let `run_demo` report progress, and their CPU times add up to the task's.
DEMO_BATCH = 50

#: The teacher task's goal: the student's validation error below this fraction of
#: the error of predicting the mean target (a normalised MSE, Lawrence et al. 1997).
TEACHER_GOAL_NMSE = 1e-3


@dataclass(frozen=True)
class DemoRow:
    """One task of the demo.

    Attributes
    ----------
    task : str
        The task and its network as built: layer sizes, and "with shortcuts" where
        every layer feeds every later one (``"XOR 2-2-1 with shortcuts"``).
    goal : str
        What a run must reach, and within how many epochs.
    runs : int
    succeeded : int
        Runs that reached the goal within the epoch budget.
    median_epochs : float
        Median epochs to the goal over the runs that reached it (NaN if none did).
    median_test_nmse : float or None
        Median normalised squared error on the test set (0 is perfect, 1 is no
        better than predicting the mean target); None for tasks judged on their
        training set (XOR, encoder).
    cpu_time : float
        CPU seconds of all runs.
    traversals : int
        Connection traversals of all runs.
    """

    task: str
    goal: str
    runs: int
    succeeded: int
    median_epochs: float
    median_test_nmse: float | None
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
        """The demo's table as text, with a line on the goals and one on the columns."""
        width = max(16, 2 * len(str(self.runs)) + 10)
        name = max([16] + [len(r.task) for r in self.rows])
        lines = [f"fastnet demo: 3 small tasks, each trained {self.runs} times from random weights "
                 f"with RPROP (master seed {self.seed})", "",
                 f"{'task':{name}s}  {'reached the goal':>{width}s}  {'median epochs':>13s}  "
                 f"{'test NMSE':>9s}  {'CPU s':>7s}  {'traversals/CPU s':>16s}"]
        for r in self.rows:
            err = "-" if r.median_test_nmse is None else f"{r.median_test_nmse:.2g}"
            epochs = "-" if r.succeeded == 0 else f"{r.median_epochs:.0f}"
            reached = f"{r.succeeded} of {r.runs} runs"
            lines.append(f"{r.task:{name}s}  {reached:>{width}s}  {epochs:>13s}  {err:>9s}  "
                         f"{r.cpu_time:7.3f}  {r.traversals_per_cpu_second():16.3g}")
        lines.append("")
        by_goal = {}
        for r in self.rows:
            by_goal.setdefault(r.goal, []).append(r.task)
        goals = "; ".join(f"{' and '.join(tasks)}: {goal}" for goal, tasks in by_goal.items())
        for text in (f"Goals -- {goals}.",
                     "Columns -- median epochs: to the goal, over the runs that reached it; test NMSE: "
                     "median error on unseen patterns relative to predicting the mean (0 = perfect, "
                     "1 = no better than the mean); traversals/CPU s: connections computed per CPU "
                     "second, forward and backward passes (higher is faster)."):
            lines.extend(textwrap.wrap(text, 100, subsequent_indent="  "))
        return "\n".join(lines)


def run_demo(runs: int = 20, seed: int = 0, *, progress=None) -> DemoResult:
    """Run the demo's three small success studies.

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
    >>> [(r.task, r.runs) for r in res.rows]
    [('XOR 2-2-1 with shortcuts', 2), ('encoder 10-5-10', 2), ('teacher 5-5-1', 2)]
    """
    from fastnet.datasets import make_encoder, make_teacher, make_xor
    from fastnet.measures import squared_error_percentage
    from fastnet.network import MLP
    from fastnet.stopping import Correct, ErrorBelow

    runs = check_int(runs, "runs", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    if progress is not None and not callable(progress):
        raise TypeError(f"`progress` must be callable or None, got {progress!r}.")
    seeds = np.random.SeedSequence(seed).spawn(3)
    budget = {"XOR": 1000, "encoder": 1000, "teacher": 2000}
    correct = "every output within 0.4 of its target (40-20-40 rule) within {} epochs"
    teacher = make_teacher(K=5.0, n_train=500, n_val=250, n_test=2000, seed=seed)
    (_, T), (_, T_val) = teacher.train, teacher.val
    # the goal as a validation squared error percentage: TEACHER_GOAL_NMSE times that of the mean
    goal = TEACHER_GOAL_NMSE * squared_error_percentage(np.full_like(T_val, T.mean()), T_val)
    tasks = (
        ("XOR", correct.format(budget["XOR"]), make_xor(),
         lambda: MLP(2, (2,), 1, shortcut=True, hidden_activation="tanh",
                     output_activation="logistic"),
         {"stop": Correct(0.4), "strip": 1, "max_epochs": budget["XOR"], "init_scale": 1.0}),
        ("encoder", correct.format(budget["encoder"]), make_encoder(10, 5),
         lambda: MLP(10, (5,), 10, shortcut=False, hidden_activation="tanh",
                     output_activation="logistic"),
         {"stop": Correct(0.4), "strip": 1, "max_epochs": budget["encoder"], "init_scale": 1.0}),
        ("teacher", f"a student net learning a random teacher net (Lawrence et al. 1997) to a "
                    f"validation NMSE below {TEACHER_GOAL_NMSE:g} within {budget['teacher']} epochs",
         teacher, lambda: MLP(5, (5,), 1, shortcut=False, hidden_activation="tanh"),
         {"stop": ErrorBelow(goal, on="val"), "max_epochs": budget["teacher"], "init_scale": 0.5}),
    )
    tasks = tuple((_task_name(task, make_net()), aim, data, make_net, kw)
                  for task, aim, data, make_net, kw in tasks)
    rows = tuple(_study(i, *task, seeds[i - 1].spawn(runs), progress)
                 for i, task in enumerate(tasks, 1))
    return DemoResult(runs=runs, seed=seed, rows=rows)


def _task_name(task, net):
    """A task's name with its network as built: ``"XOR 2-2-1 with shortcuts"``, where every
    layer feeds every later one, ``"encoder 10-5-10"`` where only adjacent layers connect."""
    shortcuts = " with shortcuts" if net.shortcut and len(net.layer_sizes) > 2 else ""
    return f"{task} {'-'.join(map(str, net.layer_sizes))}{shortcuts}"


def _study(i_task, task, goal, data, make_net, kw, trial_seeds, progress):
    """One task's runs, in batches of `DEMO_BATCH`, as a `DemoRow`."""
    from fastnet.exceptions import NoConvergenceWarning
    from fastnet.training import train_rprop_many

    X, T = data.train
    val = data.val if data.val is not None else (None, None)
    test = {"X_test": data.test[0], "Y_test": data.test[1]} if data.test is not None else {}
    runs, results, cpu_time = len(trial_seeds), [], 0.0
    if progress is not None:
        progress(task, i_task, 3, 0, runs)
    for start in range(0, runs, DEMO_BATCH):
        batch_seeds = trial_seeds[start:start + DEMO_BATCH]
        with warnings.catch_warnings():
            # Runs that miss the goal are part of the measurement here (Hamey), not a problem.
            warnings.simplefilter("ignore", NoConvergenceWarning)
            batch = train_rprop_many([make_net() for _ in batch_seeds], X, T, *val,
                                     seeds=batch_seeds, **test, **kw)
        results.extend(batch)
        cpu_time += batch[0].setup["batch"]["cpu_time"]
        if progress is not None:
            progress(task, i_task, 3, len(results), runs)
    reached = [r for r in results if r.stop_reason != "max_epochs"]
    errors = [r.final_test.nmse for r in results if r.final_test is not None]
    return DemoRow(
        task=task, goal=goal, runs=runs, succeeded=len(reached),
        median_epochs=float(np.median([r.epochs for r in reached])) if reached else float("nan"),
        median_test_nmse=float(np.median(errors)) if errors else None,
        cpu_time=cpu_time, traversals=sum(r.traversals.total for r in results))


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
