"""The baseline suite's set-up: every algorithm fastnet ships, each with its search space,
on every Proben1 problem (partitioning 1) and the generated tasks."""
from __future__ import annotations

__all__ = ["BASELINE_ALGORITHMS", "BASELINE_PROBLEMS", "BASELINE_SETUP", "baseline_suite"]

#: Every algorithm fastnet ships, each with its search space (see docs/baselines.md for
#: why these ranges). Learning rates are log-uniform; a gradient is summed over the
#: epoch's patterns (batch learning, Proben1's set-up), so backprop's rates are small.
BASELINE_ALGORITHMS = (
    "rprop+(eta_plus=uniform(1.05, 1.5), delta0=loguniform(0.001, 1.0))",
    "rprop-(eta_plus=uniform(1.05, 1.5), delta0=loguniform(0.001, 1.0))",
    "irprop+(eta_plus=uniform(1.05, 1.5), delta0=loguniform(0.001, 1.0))",
    "irprop-(eta_plus=uniform(1.05, 1.5), delta0=loguniform(0.001, 1.0))",
    "quickprop(epsilon=loguniform(1e-05, 0.01), mu=uniform(1.25, 2.25))",
    "backprop(learning_rate=loguniform(1e-05, 0.01))",
    "backprop(learning_rate=loguniform(1e-05, 0.01), momentum=uniform(0.5, 0.95))",
    "adam(learning_rate=loguniform(0.0001, 0.1), beta1=uniform(0.8, 0.95), "
    "beta2=uniform(0.99, 0.9999))",
    "scg(sigma=loguniform(1e-06, 0.001), lambda1=loguniform(1e-08, 0.0001))",
    "lm(mu=loguniform(0.0001, 0.1), mu_dec=loguniform(0.01, 0.5), mu_inc=uniform(2.0, 20.0))",
    "lbfgs(maxcor=intloguniform(3, 30))",
)

#: Partitioning 1 of Proben1's 15 problems, then the generated tasks.
BASELINE_PROBLEMS = (
    "building1", "cancer1", "card1", "diabetes1", "flare1", "gene1", "glass1", "heart1",
    "hearta1", "heartac1", "heartc1", "horse1", "mushroom1", "soybean1", "thyroid1",
    "xor", "encoder8-3-8", "parity3",
)

#: The rest of the baseline suite's set-up: pivot networks (mushroom, which has none in
#: Proben1's Table 7, the linear network), at most 1000 epochs a Proben1 run, 8
#: configurations per algorithm, 3 runs each, one study, master seed 0.
BASELINE_SETUP = {"budget": 8, "runs": 3, "studies": 1, "seed": 0, "network": "pivot",
                  "networks": {"mushroom1": "linear"}, "max_epochs": 1000, "limit": 1000}


def baseline_suite(root=None, **changes):
    """The `Suite` of the shipped baseline database.

    Parameters
    ----------
    root : str, optional
        Directory of the Proben1 files (default ``$FASTNET_DATA``, then the cache).
    **changes
        Set-up to change (``runs=10``, ``budget=32``, ``studies=3``, ``problems=...``,
        ``algorithms=...``): a bigger database of the same kind.

    Returns
    -------
    Suite

    Examples
    --------
    >>> s = baseline_suite()
    >>> len(s.algorithms), len(s.problems), s.budget, s.runs, s.studies
    (11, 18, 8, 3, 1)
    """
    from fastnet.suite._setup import Suite

    setup = {"problems": BASELINE_PROBLEMS, "algorithms": BASELINE_ALGORITHMS,
             **BASELINE_SETUP, "root": root, **changes}
    if setup.get("networks"):
        setup["networks"] = {p: n for p, n in setup["networks"].items()
                             if p in setup["problems"]} or None
    return Suite(**setup)
