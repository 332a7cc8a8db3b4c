"""Lawrence, Back, Tsoi & Giles (1997) reproduced: Table 3's MLP row and Table 4.

The set-up of their section 3.1 and 3.3-3.4: online backpropagation (an update after
every pattern), the rate falling linearly to zero over 200,000 updates from 0.1 on
the quadratic cost (1/2) sum e^2, which is ``learning_rate=0.05`` on fastnet's sum e^2;
inputs standardised by the training set; initial weights uniform in +-2.4/F (F the
fan-in of the unit); NMSE over all outputs.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["LAWRENCE_STATISTICS", "LAWRENCE_TABLE3_MLP", "LAWRENCE_TABLE4", "LAWRENCE_UPDATES",
           "LawrenceReproduction", "reproduce_lawrence"]

#: The statistics of Lawrence et al.'s Tables 3 and 4, in their order (Q1, Q3 as the
#: medians of the halves, see :func:`fastnet.stats.describe`; KS D and P of their eq. 4).
LAWRENCE_STATISTICS = ("mean", "median", "sd", "iqr", "q1", "q3", "min", "max", "ks_d", "ks_p")

_T3_TRAIN = (0.00140, 0.00140, 6.41e-5, 9.90e-5, 0.00135, 0.00145, 0.00123, 0.00153, 0.066, 0.76)
_T3_TEST = (0.00189, 0.00190, 7.55e-5, 0.000103, 0.00184, 0.00194, 0.00171, 0.00209, 0.052,
            0.95)

#: Table 3, row MLP (Mackey-Glass, 100 trials): ``{set: {statistic: value}}``, NMSE.
LAWRENCE_TABLE3_MLP = {"train": dict(zip(LAWRENCE_STATISTICS, _T3_TRAIN)),
                       "test": dict(zip(LAWRENCE_STATISTICS, _T3_TEST))}

_T4 = {
    ("train", 1): (0.00209, 0.00119, 0.00220, 0.00148, 0.000887, 0.00237, 0.000471, 0.0139,
                   0.25, 8.3e-6),
    ("train", 5): (0.00473, 0.00121, 0.00605, 0.00812, 0.000751, 0.00887, 0.000527, 0.0396,
                   0.26, 1.9e-6),
    ("train", 10): (0.0255, 0.0321, 0.01589, 0.0306, 0.00783, 0.0384, 0.00430, 0.0530, 0.17,
                    0.0045),
    ("train", 15): (0.0401, 0.0460, 0.0168, 0.0324, 0.0217, 0.0542, 0.0123, 0.0639, 0.19,
                    0.0015),
    ("test", 1): (0.00209, 0.00115, 0.00226, 0.00151, 0.000843, 0.00235, 0.000453, 0.0139,
                  0.25, 6.3e-6),
    ("test", 5): (0.00629, 0.00167, 0.00804, 0.0104, 0.00118, 0.0115, 0.000766, 0.0522, 0.25,
                  3.3e-6),
    ("test", 10): (0.0447, 0.0497, 0.0239, 0.0442, 0.0190, 0.0631, 0.01229, 0.0882, 0.17,
                   0.0071),
    ("test", 15): (0.0687, 0.0707, 0.0224, 0.0471, 0.0443, 0.0914, 0.03038, 0.0997, 0.12,
                   0.088),
}
#: Table 4 (teacher-student 5-5-1, 100 trials per K): ``{(set, K): {statistic: value}}``.
LAWRENCE_TABLE4 = {key: dict(zip(LAWRENCE_STATISTICS, v)) for key, v in _T4.items()}

#: Updates per trial (section 3.3 and 3.4): 200 epochs of 1,000 training patterns.
LAWRENCE_UPDATES = 200_000

#: The paper's rate 0.1 on (1/2) sum e^2, as fastnet's rate on sum e^2.
_RATE = 0.1 / 2
_KS = (1, 5, 10, 15)


def _statistics(values):
    from fastnet.stats import describe

    d = describe(np.asarray(values, dtype=float), lilliefors=False)
    return {"mean": d.mean, "median": d.median, "sd": d.std, "iqr": d.iqr, "q1": d.q1,
            "q3": d.q3, "min": d.min, "max": d.max, "ks_d": d.ks_statistic,
            "ks_p": d.ks_pvalue}


def _trials(data, runs, seed, method="auto"):
    """NMSE of ``runs`` trials on ``data`` (a standardised Dataset): (train, test) arrays."""
    from fastnet.network import MLP
    from fastnet.training import Backprop, train_many

    n = data.train.X.shape[0]
    epochs = LAWRENCE_UPDATES // n
    net = MLP(data.n_in, (5,), 1, shortcut=False, hidden_activation="tanh",
              output_activation="linear")
    r = train_many(net, *data.train, X_test=data.test.X, Y_test=data.test.Y,
                   algorithm=Backprop("online", _RATE, 0.0, "update"), n_trials=runs,
                   seed=seed, max_epochs=epochs, strip=epochs, init="fan_in", init_scale=2.4,
                   method=method)
    return np.array(r.final_train.nmse), np.array(r.final_test.nmse)


@dataclass
class LawrenceReproduction:
    """Lawrence et al.'s (1997) Tables 3 (MLP row) and 4 beside ours.

    Attributes
    ----------
    runs : int
        Trials per set-up (the paper's 100).
    teachers : tuple of int
        The teacher seeds of Table 4 (``make_teacher(K, seed=s)``).
    table3 : dict
        ``{set: {statistic: ours}}`` of the Mackey-Glass MLP.
    table4 : dict
        ``{(set, K): {statistic: [ours per teacher]}}``.
    seconds : dict
        Wall seconds of each table's training.
    """

    runs: int
    teachers: tuple
    table3: dict = field(default_factory=dict)
    table4: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)

    def rows(self):
        """The comparison as rows ``{table, model, K, set, statistic, paper, ours}``:
        Table 3's ``ours`` is our value; Table 4's is the median over teachers, with
        ``teachers`` (each teacher's value), ``low``/``high`` (their range) and
        ``paper_place`` (how many teachers' values lie below the paper's)."""
        out = []
        for s, stats in self.table3.items():
            for k in LAWRENCE_STATISTICS:
                out.append({"table": 3, "model": "MLP", "K": None, "set": s, "statistic": k,
                            "paper": LAWRENCE_TABLE3_MLP[s][k], "ours": stats[k]})
        for (s, K), stats in self.table4.items():
            for k in LAWRENCE_STATISTICS:
                v = stats[k]
                paper = LAWRENCE_TABLE4[(s, K)][k]
                out.append({"table": 4, "model": "MLP 5-5-1", "K": K, "set": s, "statistic": k,
                            "paper": paper, "ours": float(np.median(v)),
                            "teachers": list(map(float, v)), "low": float(min(v)),
                            "high": float(max(v)),
                            "paper_place": int(sum(x < paper for x in v))})
        return out

    def to_json(self):
        """The rows and the set-up as a JSON text."""
        return json.dumps({"paper": "Lawrence, Back, Tsoi & Giles (1997)", "runs": self.runs,
                           "teachers": list(self.teachers), "seconds": self.seconds,
                           "setup": SETUP, "rows": self.rows()}, indent=1)

    def to_text(self):
        """Both tables as text: paper beside ours (Table 4: our range over teachers)."""
        lines = []
        if self.table3:
            lines += [f"Table 3, MLP on Mackey-Glass, NMSE ({self.runs} trials; paper: 100)",
                      f"{'statistic':10s} {'train paper':>12s} {'ours':>10s} {'ratio':>6s}   "
                      f"{'test paper':>11s} {'ours':>10s} {'ratio':>6s}"]
            for k in LAWRENCE_STATISTICS:
                cells = []
                for s in ("train", "test"):
                    p, o = LAWRENCE_TABLE3_MLP[s][k], self.table3[s][k]
                    cells.append(f"{p:>11.3g} {o:>10.3g} {o / p if p else math.nan:>6.2f}")
                lines.append(f"{k:10s} " + "   ".join(cells))
        if self.table4:
            lines += ["", f"Table 4, 5-5-1 students of 5-5-1 teachers, NMSE ({self.runs} trials "
                      f"per teacher; teachers {list(self.teachers)}): paper, our median over "
                      "teachers [lowest, highest], and how many teachers lie below the paper"]
            for s in ("train", "test"):
                for K in _KS:
                    if (s, K) not in self.table4:
                        continue
                    lines.append(f"{s} K={K}")
                    for k in LAWRENCE_STATISTICS:
                        v = self.table4[(s, K)][k]
                        p = LAWRENCE_TABLE4[(s, K)][k]
                        lines.append(f"  {k:8s} {p:>10.3g}  {np.median(v):>10.3g} "
                                     f"[{min(v):.3g}, {max(v):.3g}]  "
                                     f"{sum(x < p for x in v)}/{len(v)} below")
        for name, sec in self.seconds.items():
            lines.append(f"{name}: {sec:.1f} s wall")
        return "\n".join(lines)


#: The set-up in words (written into the JSON).
SETUP = {
    "algorithm": "online backpropagation, no momentum, rate 0.1 on (1/2) sum e^2 "
                 "(learning_rate=0.05 on sum e^2), falling linearly per update to 0 at the "
                 "last of 200,000 updates (decay='update')",
    "initialisation": "init='fan_in', init_scale=2.4: each unit's weights and bias in +-2.4/F",
    "inputs": "standardised by the training set (fastnet.datasets.standardize)",
    "network": "window-5-1 (Mackey-Glass) and 5-5-1 (teacher task), tanh hidden units, linear "
               "output, no shortcut connections",
    "data": "Mackey-Glass: make_mackey_glass(1000 train, 1000 test, seed 0); teacher task: "
            "make_teacher(K, 1000 train, 5000 test, seed=teacher)",
    "measure": "NMSE over all outputs (fastnet.measures.nmse)",
}


def reproduce_lawrence(runs=100, *, teachers=(0, 1, 2, 3, 4), tables=(3, 4), seed=0,
                       progress=None, method="auto"):
    """Run Lawrence et al.'s (1997) Table 3 (MLP row) and Table 4.

    Parameters
    ----------
    runs : int, default 100
        Trials per set-up (the paper's 100); at least 3 (the statistics need them).
    teachers : sequence of int, default (0, 1, 2, 3, 4)
        Teacher seeds of Table 4: the paper does not give its teacher, so each
        statistic is reported as its spread over these teachers.
    tables : sequence of {3, 4}, default (3, 4)
    seed : int, default 0
        Master seed of the trials' initial weights and presentation orders.
    progress : callable, optional
        ``progress(text)`` after each set-up.
    method : {"auto", "lanes", "serial", "mixed"}, default "auto"
        Where each set-up's trials train (:func:`fastnet.train_many`'s
        ``method``): "auto" puts these small networks' trials side by side in
        the vector lanes; "serial" trains them one after another (each trial
        the same to rounding, several times slower).

    Returns
    -------
    LawrenceReproduction

    Raises
    ------
    ValueError, TypeError
        For fewer than 3 runs, an empty or non-integer ``teachers``, unknown
        tables or an unknown ``method``.

    Examples
    --------
    >>> rep = reproduce_lawrence(runs=3, teachers=(0,), tables=(3,))   # doctest: +SKIP
    >>> print(rep.to_text())                                          # doctest: +SKIP
    """
    from fastnet._validation import check_choice, check_int
    from fastnet.datasets import make_mackey_glass, make_teacher

    runs = check_int(runs, "runs", minimum=3)
    method = check_choice(method, "method", ("auto", "lanes", "serial", "mixed"))
    seed = check_int(seed, "seed", minimum=0)
    try:
        tables = tuple(tables)
        teachers = tuple(teachers)
    except TypeError:
        raise TypeError("`tables` and `teachers` must be sequences.") from None
    if not tables or any(t not in (3, 4) for t in tables):
        raise ValueError(f"`tables` must hold 3 and/or 4, got {tables!r}.")
    if 4 in tables and not teachers:
        raise ValueError("`teachers` must hold at least one teacher seed for Table 4, got none.")
    teachers = tuple(check_int(t, "teachers", minimum=0) for t in teachers)
    seed3, seed4 = np.random.SeedSequence(seed).spawn(2)   # the same whichever tables run
    rep = LawrenceReproduction(runs=runs, teachers=teachers)
    if 3 in tables:
        t0 = time.perf_counter()
        data = make_mackey_glass(n_train=1000, n_test=1000, seed=0, standardize=True)
        train, test = _trials(data, runs, seed3, method)
        rep.table3 = {"train": _statistics(train), "test": _statistics(test)}
        rep.seconds["table 3"] = time.perf_counter() - t0
        if progress:
            progress(f"Table 3: {runs} trials in {rep.seconds['table 3']:.1f} s")
    if 4 in tables:
        t0 = time.perf_counter()
        kids = seed4.spawn(len(_KS) * len(teachers))   # (K, teacher) in order
        per = {}
        for K in _KS:
            for i, teacher in enumerate(teachers):
                data = make_teacher(K, n_train=1000, n_test=5000, seed=teacher, standardize=True)
                train, test = _trials(data, runs, kids[_KS.index(K) * len(teachers) + i],
                                      method)
                for s, values in (("train", train), ("test", test)):
                    stats = _statistics(values)
                    for k in LAWRENCE_STATISTICS:
                        per.setdefault((s, K), {}).setdefault(k, []).append(stats[k])
                if progress:
                    progress(f"Table 4: K={K}, teacher {teacher}: {runs} trials")
        rep.table4 = {key: per[key] for key in sorted(per, key=lambda x: (x[0] != "train", x[1]))}
        rep.seconds["table 4"] = time.perf_counter() - t0
    return rep
