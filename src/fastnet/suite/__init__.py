"""Compare training algorithms across problems with their tuning counted.

A *suite* trains every algorithm on every problem the way the external-tuning
rules of AlgoPerf (Dahl et al. 2023) and the tunability studies of DeepOBS
(Schmidt et al. 2021) do: each algorithm text is a search space
(``"adam(learning_rate=loguniform(1e-4, 1e-1))"``); each of S studies draws its
own K configurations by scrambled quasi-random points (the same for every
problem), each trained R times. Per study the configuration with the lowest
median validation error is selected (Proben1's rule, Prechelt 1994: never the
test error); its test error and time to target (epochs, connection traversals,
CPU seconds) are taken, then the median over studies. Across problems:
performance profiles and AlgoPerf's score, mean ranks with the Friedman test and
Nemenyi's critical difference (Demšar 2006), the Bayesian signed-rank test with
a ROPE (Benavoli et al. 2017) and Lacoste et al. (2012)'s Poisson-binomial test
for every pair, and the expected best result after k configurations (Dodge et
al. 2019).

A baseline database ships with fastnet (:func:`baselines`): every algorithm fastnet
ships, tuned, on Proben1's 15 problems and three generated tasks, against frozen
targets (:func:`frozen_targets`); :func:`compare_with_baselines` (``fastnet suite
--baselines``) trains only new algorithms and reports them beside it.

>>> from fastnet.suite import Suite, draw_configurations
>>> draw_configurations("adam(learning_rate=loguniform(1e-3, 1e-1))", 2, seed=0)
['adam(learning_rate=0.034947729371048855)', 'adam(learning_rate=0.003494772937104883)']
>>> Suite(["xor"], ["rprop+", "adam"], budget=4, runs=2, studies=2).n_runs
4
"""
from fastnet._lazy import lazy_attributes

_LAZY = {
    **dict.fromkeys(["Suite", "MAX_SUITE_RUNS", "MAX_BUDGET", "MAX_STUDIES", "generated_task",
                     "GENERATED_SUCCESS"], "fastnet.suite._setup"),
    **dict.fromkeys(["Uniform", "LogUniform", "IntUniform", "IntLogUniform", "Choice",
                     "DISTRIBUTIONS"], "fastnet.suite._distributions"),
    **dict.fromkeys(["SearchSpace", "search_space", "draw_configurations"],
                    "fastnet.suite._space"),
    **dict.fromkeys(["run_suite", "SuiteProgress"], "fastnet.suite._run"),
    **dict.fromkeys(["SuiteResult", "CellSummary", "PairComparison", "analyse_suite", "PRIOR",
                     "PROFILE_TAUS", "BAYES_DECISION", "LACOSTE_DECISION"],
                    "fastnet.suite._analyse"),
    **dict.fromkeys(["write_suite", "summary_markdown", "suite_json", "suite_html", "OUTPUTS",
                     "CSV_COLUMNS"], "fastnet.suite._write"),
    **dict.fromkeys(["frozen_targets", "choose_targets", "targets_document", "TARGETS_FORMAT",
                     "TARGET_QUANTILE"], "fastnet.suite._targets"),
    **dict.fromkeys(["Baselines", "baselines", "DATABASE_FORMAT", "DATABASE_COLUMNS",
                     "DATABASE_FILES"], "fastnet.suite._database"),
    **dict.fromkeys(["suite_beside", "compare_with_baselines", "build_database"],
                    "fastnet.suite._compare"),
    **dict.fromkeys(["baseline_suite", "BASELINE_ALGORITHMS", "BASELINE_PROBLEMS",
                     "BASELINE_SETUP"], "fastnet.suite._preset"),
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
