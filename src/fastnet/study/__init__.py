"""Timing studies in one call (Hamey 1992): several algorithms, K trials each, Hamey's measures.

A study trains one task and network from the same K initial weights with every
algorithm (through :func:`fastnet.train_many`), a trial succeeding at the first
epoch after which the success criterion holds, failing if not before the epoch
limit T. For each algorithm it reports the success rate at T, the optimal epoch
limit T_E, the peak efficiency, the half-efficiency range, the optimised Fahlman
average, the asymptotic success rate lambda and the corrected mean and median
successful times (:func:`fastnet.stats.hamey_analysis`), Lawrence et al. (1997)'s
description of the epochs and CPU times, the training and efficiency graphs of
all algorithms on shared axes, and which is faster by a log-rank test of the
success times censored at T (:func:`scipy.stats.logrank`).

>>> from fastnet.study import Study, run_study
>>> result = run_study(Study("xor", ["rprop+", "backprop(learning_rate=[0.5, 2.0])"],
...                          trials=20, limit=200))
>>> [a.spec for a in result.algorithms]
['rprop+', 'backprop(learning_rate=0.5)', 'backprop(learning_rate=2.0)']
"""
from fastnet._lazy import lazy_attributes

# Names and the modules that hold them, imported on first use: the command line
# builds its `study` parser (and experiments read algorithm grids) without
# loading the study's statistics and writers.
_LAZY = {
    **dict.fromkeys(["ALPHA", "AlgorithmTrials", "LogRank", "StudyResult", "logrank_test",
                     "run_study", "cost_unit", "COST_UNITS"], "fastnet.study._run"),
    **dict.fromkeys(["MAX_LIMIT", "MAX_TRIALS", "MAX_GRID_CELLS", "MAX_TRIAL_EPOCHS", "Study",
                     "expand_grid", "grid_size"], "fastnet.study._setup"),
    **dict.fromkeys(["summary_markdown", "write_study"], "fastnet.study._write"),
    **dict.fromkeys(["CHUNK_TRIALS", "CHUNK_TRIAL_EPOCHS"], "fastnet.study._chunks"),
    "StudyProgress": "fastnet.study._schedule",
}

__all__ = ["Study", "run_study", "StudyResult", "AlgorithmTrials", "LogRank", "logrank_test",
           "expand_grid", "grid_size", "write_study", "summary_markdown", "ALPHA", "MAX_TRIALS",
           "MAX_LIMIT", "MAX_GRID_CELLS", "MAX_TRIAL_EPOCHS", "cost_unit", "COST_UNITS",
           "CHUNK_TRIALS", "CHUNK_TRIAL_EPOCHS", "StudyProgress"]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
