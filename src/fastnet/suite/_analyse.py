"""A suite's analysis: selection by validation per study, time to target, the expected best
after k configurations, and the comparisons across problems."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SuiteResult", "CellSummary", "PairComparison", "analyse_suite", "PRIOR",
           "PROFILE_TAUS", "BAYES_DECISION", "LACOSTE_DECISION"]

#: Strength of the Dirichlet process prior of the Bayesian signed-rank test (its
#: pseudo-observation at 0: no difference), baycomp's default.
PRIOR = 0.5
#: Posterior probability above which the Bayesian signed-rank test decides
#: (Benavoli et al. 2017).
BAYES_DECISION = 0.95
#: Posterior probability above which Lacoste's Poisson-binomial test names the better
#: algorithm (Lacoste et al. 2012 found 0.85 safe at the type-I error of a 0.9 test).
LACOSTE_DECISION = 0.85
#: The ratios tau at which ``suite.json`` lists every profile (beside each profile's
#: own steps up to r_max = 4).
PROFILE_TAUS = (1.0, 1.25, 1.5, 2.0, 3.0, 4.0)
#: Monte Carlo samples of the Bayesian signed-rank test's posterior.
BAYES_SAMPLES = 20_000
#: Bootstrap resamples of the expected-best band.
CURVE_BOOTSTRAP = 1000
#: A comparison across fewer problems than this says so: Demšar (2006) and Benavoli et al.
#: (2017) compare over tens of data sets; from three, a pair whose errors all lie within
#: the ROPE is "equivalent" with a posterior of 1, which decides little.
FEW_PROBLEMS = 10


def plural(n, word, words=None):
    """``"1 algorithm"``, ``"2 algorithms"`` (``words``: the plural, default word + s)."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {words or word + 's'}"


def probability(p):
    """A probability as text with three decimals, ``"<0.001"`` and ``">0.999"`` at the
    ends (a Monte Carlo estimate of exactly 0 or 1 is not a certainty), ``"-"`` for none."""
    if p is None or not math.isfinite(p):
        return "-"
    if p < 0.0005:
        return "<0.001"
    if p > 0.9995:
        return ">0.999"
    return f"{p:.3f}"


def _few(n):
    """The caveat of a comparison from ``n`` problems (empty from `FEW_PROBLEMS` on)."""
    if n >= FEW_PROBLEMS:
        return ""
    return f" (from {plural(n, 'problem')} only: fewer than {FEW_PROBLEMS} decide little)"


def is_classification(problem):
    """Whether a problem name is a Proben1 classification problem (``"cancer1"``)."""
    from fastnet.datasets import PROBEN1_PROBLEMS

    info = PROBEN1_PROBLEMS.get(problem.rstrip("0123456789"))
    return info is not None and info.kind == "classification"


def _median(values):
    """Median with misses as inf (the median is inf once half or more miss)."""
    v = np.sort(np.asarray(values, dtype=float))
    return float(np.median(v)) if v.size else math.inf


@dataclass(frozen=True)
class CellSummary:
    """One algorithm on one problem: its selected configurations and their measures.

    Attributes
    ----------
    algorithm, problem : str
    selected : tuple of str
        The configuration selected in each study (lowest median validation error; on a
        generated task the lowest median epochs to success, then the fewest failures).
    error : float
        Median over studies of the selected configuration's median test squared error
        percentage (generated tasks: its percentage of runs that failed).
    validation : float
        The same of the median best validation error (generated tasks: median epochs
        to success, failures inf); inf where runs diverged.
    epochs, traversals, cpu_seconds : float
        Median over studies of the selected configuration's median time to target
        (inf: half of its runs or more missed it).
    successes : int
        Runs of the selected configurations that reached the target, all studies.
    n_runs : int
        Runs of the selected configurations, all studies.
    diverged : int
        Runs of all this algorithm's configurations on the problem that diverged.
    curve : fastnet.stats.ExpectedBest
        Expected best validation result after k configurations (k = 1..budget),
        with its bootstrap band, from all studies' configurations.
    """

    algorithm: str
    problem: str
    selected: tuple
    error: float
    validation: float
    epochs: float
    traversals: float
    cpu_seconds: float
    successes: int
    n_runs: int
    diverged: int
    curve: object


@dataclass(frozen=True)
class PairComparison:
    """Two algorithms compared across problems on the selected errors.

    Attributes
    ----------
    a, b : str
    p_a_better, p_equivalent, p_b_better : float
        Bayesian signed-rank test (Benavoli et al. 2017) with ROPE ``rope``
        percentage points and prior strength `PRIOR`.
    bayes_verdict : str
        What it decides (above `BAYES_DECISION`), naming the unit.
    lacoste : float or None
        Lacoste's Poisson-binomial P(a better than b) over the Proben1 classification
        problems (representative networks' test predictions); None without such problems.
    lacoste_problems : int
    lacoste_verdict : str
    """

    a: str
    b: str
    p_a_better: float
    p_equivalent: float
    p_b_better: float
    bayes_verdict: str
    lacoste: float | None
    lacoste_problems: int
    lacoste_verdict: str


@dataclass(frozen=True, repr=False)
class SuiteResult:
    """What `run_suite` returns.

    Attributes
    ----------
    suite : Suite
    configurations : dict
        {algorithm: [configurations of each study]}.
    cells : dict
        {(algorithm, problem): CellSummary}.
    targets : dict
        {problem: validation error target}: a finite number for a Proben1 problem, or
        None (a generated task, judged by success; or a Proben1 problem on which every
        algorithm's selected configurations diverged: no target, no time measured).
    error_profiles, time_profiles : fastnet.stats.PerformanceProfiles
        Of the selected errors and of the times to target in traversals.
    friedman : fastnet.stats.FriedmanNemenyi or None
        On the selected errors (None with fewer than 2 algorithms or problems).
    pairs : tuple of PairComparison
    verdicts : tuple of str
    rows : tuple of dict
        One per trained run (``scores.csv``).
    data_sha256 : dict
    n_trained, n_resumed : int
        Cells trained now and found finished.
    backend : str
    wall_time : float
    labels : dict
        {algorithm text: short label} as the tables and pictures name them.
    baselines : dict or None
        Where the baseline algorithms' numbers came from when the suite was compared
        against a baseline database (``algorithms``: those read from it, ``fastnet``,
        ``machine``, ``command``, ``created``, ``where``); None when all were trained.
    rules : tuple of dict
        The rules files whose rules the suite trained (:func:`fastnet.algorithms.load_rules`),
        each ``{"file", "sha256", "algorithms"}`` (the rules it trained).
    """

    suite: object
    configurations: dict
    cells: dict
    targets: dict
    error_profiles: object
    time_profiles: object
    friedman: object
    pairs: tuple
    verdicts: tuple
    rows: tuple
    data_sha256: dict
    n_trained: int
    n_resumed: int
    backend: str
    wall_time: float
    labels: dict = field(default_factory=dict)
    baselines: dict | None = None
    rules: tuple = ()

    def table(self, what="error"):
        """One measure of every algorithm on every problem.

        Parameters
        ----------
        what : str, default "error"
            A `CellSummary` field: ``"error"``, ``"validation"``, ``"epochs"``,
            ``"traversals"``, ``"cpu_seconds"``, ``"successes"``, ...

        Returns
        -------
        dict
            {algorithm's label: {problem: value}} (labels: the algorithms' names; where
            several share a name, the name with the parameters that tell them apart).
        """
        return {self.labels[a]: {p: getattr(self.cells[(a, p)], what)
                                 for p in self.suite.problems} for a in self.suite.algorithms}

    def __repr__(self):
        s = self.suite
        return (f"SuiteResult({plural(len(s.algorithms), 'algorithm')} x "
                f"{plural(len(s.problems), 'problem')}, budget {s.budget}, "
                f"{plural(s.runs, 'run')}, {plural(s.studies, 'study', 'studies')}; "
                f"{plural(self.n_trained, 'cell')} trained, {self.n_resumed} resumed)")


def _config_stats(suite, problem, rec, target):
    """Per configuration: (selection key, error, validation, times (3), successes, runs,
    diverged, curve value) with a given target (None before the target is known)."""
    runs = rec["runs"]
    n = len(runs)
    diverged = sum(bool(r["diverged"]) for r in runs)
    if suite.is_generated(problem):
        t = [r["epochs"] if r["success"] else math.inf for r in runs]
        times = [(r["epochs"], r["traversals"], r["cpu_time"]) if r["success"]
                 else (math.inf,) * 3 for r in runs]
        fails = 100.0 * sum(not r["success"] for r in runs) / n
        med = _median(t)
        censored = float(np.median([min(x, suite.limit) for x in t]))
        ok = sum(bool(r["success"]) for r in runs)
        return ((med, fails), fails, med, times, ok, n, diverged, censored)
    val = [math.inf if r["val_error"] is None else r["val_error"] for r in runs]
    test = [math.inf if r["test_error"] is None else r["test_error"] for r in runs]
    times, ok = [], 0
    for r in runs:
        if "to_target" in r:            # (a baseline database's run: the curve is not kept)
            t = r["to_target"] if target is not None else None
            times.append((math.inf,) * 3 if t is None else tuple(t))
            ok += t is not None
            continue
        hit = None
        if target is not None and math.isfinite(target):
            hit = next((k for k, v in enumerate(r["curve"]) if v is not None and v <= target),
                       None)
        if hit is None:
            times.append((math.inf,) * 3)
            continue
        ok += 1
        e = (hit + 1) * r.get("strip", 5)
        share = e / r["epochs"] if r["epochs"] else 1.0
        times.append((float(e), r["traversals"] * share, r["cpu_time"] * share))
    return ((_median(val),), _median(test), _median(val), times, ok, n, diverged, _median(val))


def _select(suite, problem, configs, records, target):
    """Per study: (selected configuration, its stats)."""
    out = []
    for study in configs:
        stats = [_config_stats(suite, problem, records[(problem, c)], target) for c in study]
        best = min(range(len(study)), key=lambda i: stats[i][0])
        out.append((study[best], stats[best]))
    return out


def _cell(suite, a, problem, configs, records, target, seed):
    from fastnet.stats import expected_best

    chosen = _select(suite, problem, configs, records, target)
    times = [[_median([t[j] for t in st[3]]) for j in range(3)] for _, st in chosen]
    curve_values = [_config_stats(suite, problem, records[(problem, c)], None)[7]
                    for study in configs for c in study]
    finite = [v for v in curve_values if math.isfinite(v)]
    cap = max(finite) if finite else 100.0      # diverged configurations count as the worst
    values = [v if math.isfinite(v) else cap for v in curve_values]
    curve = expected_best(values, k=suite.budget, n_boot=CURVE_BOOTSTRAP, seed=seed)
    all_configs = dict.fromkeys(c for study in configs for c in study)
    return CellSummary(
        a, problem, tuple(c for c, _ in chosen),
        error=_median([st[1] for _, st in chosen]),
        validation=_median([st[2] for _, st in chosen]),
        epochs=_median([t[0] for t in times]), traversals=_median([t[1] for t in times]),
        cpu_seconds=_median([t[2] for t in times]),
        successes=int(sum(st[4] for _, st in chosen)), n_runs=int(sum(st[5] for _, st in chosen)),
        diverged=int(sum(_config_stats(suite, problem, records[(problem, c)], None)[6]
                         for c in all_configs)),
        curve=curve)


def _targets(suite, configs, records):
    """The validation error target of each Proben1 problem (None for generated tasks)."""
    targets = {}
    for p in suite.problems:
        if suite.is_generated(p):
            targets[p] = None
        elif isinstance(suite.target, dict):
            targets[p] = suite.target[p]        # (frozen: never moves with the algorithms)
        elif suite.target is not None:
            targets[p] = suite.target
        else:
            # an algorithm whose selected configurations diverged has no best validation
            # error (inf): the target is the median of the others', never inf; with none,
            # the problem has no target (and no time to target)
            best = [_median([st[2] for _, st in _select(suite, p, configs[a], records, None)])
                    for a in suite.algorithms]
            finite = [b for b in best if math.isfinite(b)]
            targets[p] = float(np.median(finite)) if finite else None
    return targets


def _arguments(text):
    """The top-level ``key=value`` texts of an algorithm text (``[]`` without any)."""
    inner = text[text.index("(") + 1:text.rindex(")")] if "(" in text else ""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(inner + ","):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            if inner[start:i].strip():
                out.append(inner[start:i].strip())
            start = i + 1
    return out


def _labels(suite):
    """Short names of the algorithms: their names; where several share one, the name with
    the parameters that tell them apart (``irprop+(eta_minus=uniform(0.3, 0.7))``), or
    their whole texts where that does not."""
    names = [s.name for s in suite.spaces]
    labels = {}
    for a, n in zip(suite.algorithms, names):
        if names.count(n) == 1:
            labels[a] = n
            continue
        mates = [b for b, m in zip(suite.algorithms, names) if m == n]
        shared = set.intersection(*(set(_arguments(b)) for b in mates))
        own = [x for x in _arguments(a) if x not in shared]
        labels[a] = f"{n}({', '.join(own)})" if own else n
    if len(set(labels.values())) < len(labels):
        return {a: (n if names.count(n) == 1 else a) for a, n in zip(suite.algorithms, names)}
    return labels


def _rows(suite, configs, records, targets):
    rows = []
    for a in suite.algorithms:
        for p in suite.problems:
            # a configuration that several studies drew (a text without distributions)
            # trained once: its runs are listed once, under the first study
            where = {}
            for s, study in enumerate(configs[a]):
                for k, c in enumerate(study):
                    where.setdefault(c, (s, k, []))[2].append(s)
            for c, (s, k, studies) in where.items():
                rec = records[(p, c)]
                st = _config_stats(suite, p, rec, targets[p])
                for r, t in zip(rec["runs"], st[3]):
                    rows.append({
                        "algorithm": a, "problem": p, "study": s, "configuration": k,
                        "studies": " ".join(map(str, studies)),
                        "parameters": c, "run": r["run"], "epochs": r["epochs"],
                        "relevant_epoch": r["relevant_epoch"],
                        "stop_reason": r["stop_reason"],
                        "validation_error": r["val_error"], "test_error": r["test_error"],
                        "train_error": r["train_error"], "traversals": r["traversals"],
                        "cpu_seconds": r["cpu_time"],
                        "on_target": math.isfinite(t[0]),
                        "epochs_to_target": t[0] if math.isfinite(t[0]) else None,
                        "traversals_to_target": t[1] if math.isfinite(t[1]) else None,
                        "cpu_seconds_to_target": t[2] if math.isfinite(t[2]) else None})
    return rows


def _test_error(run):
    return math.inf if run["test_error"] is None else run["test_error"]


def _representative(suite, cell, records):
    """The test predictions' wrongness of a representative network: in the study whose
    selected error is the median (lower middle), the run with the median test error."""
    per_study = []
    for c in cell.selected:
        runs = [r for r in records[(cell.problem, c)]["runs"] if r.get("test_wrong")]
        if runs:
            per_study.append(sorted(runs, key=_test_error)[(len(runs) - 1) // 2])
    if not per_study:
        return None
    per_study.sort(key=_test_error)
    return np.frombuffer(per_study[(len(per_study) - 1) // 2]["test_wrong"].encode(),
                         dtype=np.uint8) == ord("1")


def _join(names):
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _bayes(suite, cells, a, b, la, lb):
    """(P(a better), P(equivalent), P(b better)), verdict: the Bayesian signed-rank test."""
    from fastnet.stats import bayesian_signed_rank

    problems = suite.problems
    ea = [cells[(a, p)].error for p in problems]
    eb = [cells[(b, p)].error for p in problems]
    keep = [k for k in range(len(problems)) if math.isfinite(ea[k]) and math.isfinite(eb[k])]
    if not keep:
        lost = [f"{lx}'s selected configurations diverged on {_join(q)}" for lx, q in (
            (la, [p for p, e in zip(problems, ea) if not math.isfinite(e)]),
            (lb, [p for p, e in zip(problems, eb) if not math.isfinite(e)])) if q]
        return (math.nan,) * 3, f"no problem where both have a finite error ({'; '.join(lost)})"
    r = bayesian_signed_rank([ea[k] for k in keep], [eb[k] for k in keep], rope=suite.rope,
                             prior=PRIOR, n_samples=BAYES_SAMPLES, seed=suite.seed)
    probs = (r.p_a_better, r.p_equivalent, r.p_b_better)
    unit = f"selected error (ROPE ±{suite.rope:g} percentage points)"
    few = _few(len(keep))
    if probs[0] > BAYES_DECISION:
        return probs, f"{la} has the lower {unit}: P = {probability(probs[0])}{few}"
    if probs[2] > BAYES_DECISION:
        return probs, f"{lb} has the lower {unit}: P = {probability(probs[2])}{few}"
    if probs[1] > BAYES_DECISION:
        return probs, f"{la} and {lb} are equivalent in {unit}: P = {probability(probs[1])}{few}"
    return probs, (f"undecided on the {unit} (no probability above {BAYES_DECISION}"
                   f"{few.replace(' (', '; ', 1)[:-1] if few else ''})")


def _lacoste(suite, wrong, a, b, la, lb):
    """(P(a better), problems used, verdict): Lacoste's Poisson-binomial test over the
    Proben1 classification problems where both have a network that did not diverge."""
    from fastnet.stats import poisson_binomial_test, prob_better

    classes = [p for p in suite.problems if not suite.is_generated(p) and is_classification(p)]
    if not classes:
        return None, 0, "no Proben1 classification problem in the suite: Lacoste's test not made"
    ps, lost = [], {la: [], lb: []}
    for p in classes:
        wa, wb = wrong[(a, p)], wrong[(b, p)]
        for lx, w in ((la, wa), (lb, wb)):
            if w is None:
                lost[lx].append(p)
        if wa is not None and wb is not None:
            ps.append(prob_better(int(np.count_nonzero(wa & ~wb)), int(np.count_nonzero(wb & ~wa))))
    why = "; ".join(f"every run of {lx}'s selected configurations diverged on {_join(q)}"
                    for lx, q in lost.items() if q)
    if not ps:
        return None, 0, (f"Lacoste's test not made: {why} (the suite's Proben1 "
                         f"classification problem{'s' if len(classes) > 1 else ''})")
    lac = float(poisson_binomial_test(ps).probability)
    note = _few(len(ps))
    if why:
        note += f" (not on {_join(p for p in classes if any(p in q for q in lost.values()))}: {why})"
    if lac > LACOSTE_DECISION:
        return lac, len(ps), f"{la} better in test classification error: P = {probability(lac)}{note}"
    if 1 - lac > LACOSTE_DECISION:
        return lac, len(ps), (f"{lb} better in test classification error: "
                              f"P = {probability(1 - lac)}{note}")
    return lac, len(ps), (f"undecided on the test classification error "
                          f"(P({la} better) = {probability(lac)}){note}")


def _pairs(suite, cells, records, labels):
    algos, problems = suite.algorithms, suite.problems
    wrong = {(a, p): _representative(suite, cells[(a, p)], records)
             for a in algos for p in problems if not suite.is_generated(p)}
    out = []
    for i, a in enumerate(algos):
        for b in algos[i + 1:]:
            la, lb = labels[a], labels[b]
            probs, verdict = _bayes(suite, cells, a, b, la, lb)
            lac, n, lv = _lacoste(suite, wrong, a, b, la, lb)
            out.append(PairComparison(a, b, *map(float, probs), verdict, lac, n, lv))
    return tuple(out)


def _verdicts(suite, friedman, err, tim, labels):
    out = []
    names = [labels[a] for a in suite.algorithms]
    best_err = int(np.argmax(err.scores))
    out.append(f"Error (selected test squared error percentage; failure percentage on "
               f"generated tasks): best profile score {names[best_err]} "
               f"({err.scores[best_err]:.3f}; wins {err.won[best_err]:.0%} of the problems).")
    best_t = int(np.argmax(tim.scores))
    if tim.scores[best_t] > 0:
        out.append(f"Time to target in connection traversals: best profile score "
                   f"{names[best_t]} ({tim.scores[best_t]:.3f}; fastest on "
                   f"{tim.won[best_t]:.0%} of the problems).")
    else:
        out.append("Time to target in connection traversals: no algorithm's selected "
                   "configurations reached the target on any problem (half of their runs or "
                   "more missed it): no time verdict.")
    if friedman is not None:
        order = np.argsort(friedman.mean_ranks)
        ranks = ", ".join(f"{names[i]} {friedman.mean_ranks[i]:.2f}" for i in order)
        if friedman.pvalue < friedman.alpha:
            out.append(f"Mean ranks of the selected errors: {ranks}; Friedman p = "
                       f"{friedman.pvalue:.3g} < {friedman.alpha}: the algorithms differ; "
                       f"ranks further apart than CD = {friedman.critical_difference:.2f} "
                       "differ by Nemenyi's test.")
        else:
            out.append(f"Mean ranks of the selected errors: {ranks}; Friedman p = "
                       f"{friedman.pvalue:.3g}: no difference shown at {friedman.alpha}"
                       f"{_few(len(suite.problems))}.")
    return tuple(out)


def analyse_suite(suite, configs, records, shas, *, n_trained=0, n_resumed=0,
                  backend="none", wall_time=0.0, baselines=None):
    """Analyse a suite's trained cells (see `run_suite`).

    Parameters
    ----------
    suite : Suite
    configs : dict
        {algorithm: [configurations of each study]} (`Suite.configurations`).
    records : dict
        {(problem, configuration): cell record}.
    shas : dict
        {problem: data SHA-256 or None}.
    n_trained, n_resumed : int, default 0
        Cells trained now and found finished (reported, not used).
    backend : str, default "none"
    wall_time : float, default 0.0
    baselines : dict, optional
        Provenance of the algorithms read from a baseline database
        (`SuiteResult.baselines`).

    Returns
    -------
    SuiteResult
    """
    from fastnet.stats import friedman_nemenyi, performance_profiles

    targets = _targets(suite, configs, records)
    cells = {}
    for i, a in enumerate(suite.algorithms):
        for j, p in enumerate(suite.problems):
            cells[(a, p)] = _cell(suite, a, p, configs[a], records, targets[p],
                                  seed=np.random.default_rng([suite.seed, i, j]))
    labels = _labels(suite)
    names = [labels[a] for a in suite.algorithms]
    err = [[cells[(a, p)].error for p in suite.problems] for a in suite.algorithms]
    tim = [[cells[(a, p)].traversals for p in suite.problems] for a in suite.algorithms]
    err_prof = performance_profiles(err, algorithms=names, problems=suite.problems)
    tim_prof = performance_profiles(tim, algorithms=names, problems=suite.problems)
    friedman = None
    if len(suite.algorithms) >= 2 and len(suite.problems) >= 2:
        friedman = friedman_nemenyi(err, algorithms=names, problems=suite.problems)
    pairs = _pairs(suite, cells, records, labels)
    return SuiteResult(suite, configs, cells, targets, err_prof, tim_prof, friedman, pairs,
                       _verdicts(suite, friedman, err_prof, tim_prof, labels),
                       tuple(_rows(suite, configs, records, targets)), dict(shas), n_trained,
                       n_resumed, backend, wall_time, labels, baselines)
