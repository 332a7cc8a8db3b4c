"""`compare`: several result files (or networks) lined up per problem and tested:
Proben1 t-tests per problem, sign/Wilcoxon over problems, Lacoste's test on predictions."""
from __future__ import annotations

import numpy as np

from fastnet.report._compare import Comparison
from fastnet.report._render import MEASURES, _incomplete_note
from fastnet.report._summary import _results


def compare(results, *, labels=None, measure="squared", alpha=0.05):
    """Compare result files (and the networks in them) per problem and over problems.

    Parameters
    ----------
    results : sequence of (str, os.PathLike or ResultFile)
        Result files. Every (file, network) pair is one algorithm; at least two
        are needed in all.
    labels : sequence of str, optional
        One label per file (default: the file names without ``.jsonl``); with
        several networks in a file, ``":network"`` is appended. Without `labels`, a
        single file's networks are labelled by their names alone.
    measure : {"squared", "classification"}, default="squared"
        Test squared error percentage (Proben1's headline measure) or test
        classification error (classification problems only).
    alpha : float, default=0.05
        Significance level of the t-tests.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        If fewer than two algorithms are given, the files share no problem, or the
        same problem was run on different data files.
    """
    from fastnet.stats import compare_errors, pairwise_table

    if measure not in MEASURES:
        raise ValueError(f"`measure` must be one of {list(MEASURES)}, got {measure!r}.")
    files = [_results(r) for r in results]
    algs = _result_sets(files, labels)
    problems, notes = _shared_problems(algs, files, measure)
    field_name = MEASURES[measure][0]
    samples = {a[0]: {p: np.array([r["test"][field_name] for r in a[3][p]], dtype=float)
                      for p in problems} for a in algs}
    ttests = {}
    for p in problems:
        for i, a in enumerate(algs):
            for b in algs[i + 1:]:
                x, y = samples[a[0]][p], samples[b[0]][p]
                try:
                    ttests[(p, a[0], b[0])] = compare_errors(
                        x, y, log=(measure == "squared"), alpha=alpha, names=(a[0], b[0]))
                except ValueError as exc:
                    ttests[(p, a[0], b[0])] = "n/a"
                    notes.append(f"{p}, {a[0]} vs {b[0]}: no t-test ({exc})")
    names = [a[0] for a in algs]
    letters = [chr(ord("A") + i) if i < 26 else f"A{i}" for i in range(len(algs))]
    sign = wilcoxon = None
    if len(problems) >= 2:
        means = np.array([[samples[n][p].mean() for p in problems] for n in names])
        sign = pairwise_table(means, names=letters, method="sign", datasets=problems)
        wilcoxon = pairwise_table(means, names=letters, method="wilcoxon", datasets=problems)
    else:
        notes.append("sign and Wilcoxon tests need at least two problems")
    lacoste, lac_problems = _lacoste(algs, problems, letters, notes)
    return Comparison(labels=tuple(names), sources=tuple((str(a[1].path), a[2]) for a in algs),
                      problems=tuple(problems), measure=measure, samples=samples, ttests=ttests,
                      sign=sign, wilcoxon=wilcoxon, lacoste=lacoste,
                      lacoste_problems=tuple(lac_problems), notes=tuple(notes),
                      headers={str(f.path): f.header for f in files})


def _result_sets(files, labels):
    """The algorithms compared, ``[(label, file, network, {problem: runs})]``: one per
    (file, network) pair, labelled uniquely from ``labels`` (default: the file names)."""
    own_labels = labels is None
    if labels is None:
        labels = [f.path.name[:-6] if f.path.name.endswith(".jsonl") else f.path.name
                  for f in files]
    labels = list(labels)
    if len(labels) != len(files):
        raise ValueError(f"`labels` has {len(labels)} entries for {len(files)} files.")
    algs = []  # (label, file, network, cells)
    seen = set()
    for f, lab in zip(files, labels):
        cells = f.cells()
        nets = []
        for (_, n) in cells:
            if n not in nets:
                nets.append(n)
        for n in nets:
            # the file's name says nothing when there is one file and no label given
            name = (lab if len(nets) == 1 else n if own_labels and len(files) == 1
                    else f"{lab}:{n}")
            k = 2
            base = name
            while name in seen:
                name, k = f"{base}#{k}", k + 1
            seen.add(name)
            algs.append((name, f, n, {p: runs for (p, nn), runs in cells.items() if nn == n}))
    if len(algs) < 2:
        raise ValueError(f"`results`: compare needs at least two result sets (files or networks), "
                         f"got {len(algs)}.")
    return algs


def _shared_problems(algs, files, measure):
    """``(problems, notes)``: the problems every algorithm ran on the same data file
    (with a classification error, for that measure), and notes on what was left out."""
    problems = [p for p in algs[0][3] if all(p in a[3] for a in algs[1:])]
    notes = [f"{f.path.name}: {_incomplete_note(f.missing_runs(), f.header)}"
             for f in files if f.missing_runs()]
    # the same problem must come from the same data file
    for p in list(problems):
        shas = {a[1].header.get("data", {}).get(p, {}).get("sha256") for a in algs}
        if len(shas) > 1:
            raise ValueError(f"`results`: {p} was run on different data files in the result files "
                             "(their SHA-256 differ); the runs are not comparable.")
    if measure == "classification":
        dropped = [p for p in problems
                   if any(r["test"]["classification_error"] is None for a in algs for r in a[3][p])]
        if dropped:
            notes.append(f"approximation problems have no classification error: "
                         f"{', '.join(dropped)} left out")
        problems = [p for p in problems if p not in dropped]
    if not problems:
        raise ValueError("`results`: the result sets share no problem to compare on.")
    return problems, notes


def _best_run(runs):
    """The run with the lowest validation error (the lowest run number on ties)."""
    return min(runs, key=lambda r: (r["val"]["squared_error_percentage"], r["run"]))


def _lacoste(algs, problems, letters, notes):
    """``(table or None, problems)``: Lacoste's Poisson binomial test on the best runs'
    test predictions, for the algorithms that kept them, on the problems where all did;
    why it was skipped or narrowed goes to ``notes``."""
    from fastnet.stats import pairwise_table

    with_pred = [i for i, a in enumerate(algs)
                 if any("test_wrong" in _best_run(a[3][p]) for p in problems)]
    lac_problems = [p for p in problems
                    if with_pred and all("test_wrong" in _best_run(algs[i][3][p])
                                         for i in with_pred)]
    lacoste = None
    if len(with_pred) >= 2 and lac_problems:
        losses = {letters[i]: [np.array([c == "1" for c in _best_run(algs[i][3][p])["test_wrong"]],
                                        dtype=float) for p in lac_problems]
                  for i in with_pred}
        lacoste = pairwise_table(losses, method="poisson_binomial", datasets=lac_problems)
        left_out = [letters[i] for i in range(len(algs)) if i not in with_pred]
        if left_out:
            notes.append(f"Lacoste's test leaves out {', '.join(left_out)} (no test predictions)")
    else:
        notes.append("Lacoste's Poisson binomial test needs per-example test predictions on "
                     "classification problems in at least two result sets (run `fastnet bench` "
                     "with --keep-predictions)")
    return lacoste, lac_problems
