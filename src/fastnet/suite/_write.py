"""A suite's outputs: suite.json, scores.csv, suite.html and the Markdown summary."""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from fastnet.suite._analyse import plural, probability

__all__ = ["write_suite", "summary_markdown", "suite_json", "suite_html", "OUTPUTS", "CSV_COLUMNS"]

#: The files `write_suite` writes into the output directory.
OUTPUTS = ("suite.html", "scores.csv", "suite.json", "summary.md")


#: Columns of ``scores.csv``, one row per trained run.
CSV_COLUMNS = ("algorithm", "problem", "study", "configuration", "studies", "parameters", "run",
               "epochs",
               "relevant_epoch", "stop_reason", "validation_error", "test_error", "train_error",
               "traversals", "cpu_seconds", "on_target", "epochs_to_target",
               "traversals_to_target", "cpu_seconds_to_target")


def _num(v):
    """A JSON number, or None where there is none (a miss, a diverged run)."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _text(v, digits=4):
    """A number as table text; a miss says so instead of showing inf or nan."""
    if v is None:
        return "-"
    v = float(v)
    if math.isinf(v):
        return "missed"
    if math.isnan(v):
        return "-"
    if abs(v) >= 1e5:
        return f"{v:.3e}"
    return f"{v:.{digits}g}"


def _taus(profiles):
    """The tau at which suite.json lists the profiles: `PROFILE_TAUS` and every step."""
    from fastnet.suite._analyse import PROFILE_TAUS

    steps = [float(t) for t in profiles.taus if t <= profiles.r_max]
    return sorted(set(PROFILE_TAUS) | set(steps))


def _tau_key(t):
    return f"{t:.6g}"


def suite_json(result):
    """The content of ``suite.json``.

    Parameters
    ----------
    result : SuiteResult

    Returns
    -------
    dict
        JSON values only: a miss or an error of diverged runs is None (null).
    """
    from fastnet._provenance import machine_description
    from fastnet._version import __version__
    from fastnet.suite._analyse import PRIOR

    s = result.suite
    labels = result.labels
    profiles = {}
    for i, a in enumerate(s.algorithms):
        profiles[labels[a]] = {
            what: {_tau_key(t): float(prof.rho(t)[i]) for t in _taus(prof)}
            for what, prof in (("error", result.error_profiles), ("time", result.time_profiles))}
    f = result.friedman
    cells = result.cells
    return {
        "setup": s.to_dict(),
        "version": __version__,
        "machine": machine_description(),
        "data_sha256": result.data_sha256,
        "labels": labels,
        "configurations": {labels[a]: c for a, c in result.configurations.items()},
        "targets": {p: _num(t) for p, t in result.targets.items()},
        "units": {"selected": "median over studies of the selected configuration's median "
                  "test squared error percentage (generated tasks: percentage of its runs "
                  "that failed); null: every run diverged",
                  "time": "connection traversals to target (median; null: missed)",
                  "targets": "validation error a Proben1 run must reach; null: a generated "
                  "task (judged by success) or no target (every algorithm's selected "
                  "configurations diverged)"},
        "selected": {labels[a]: {p: _num(cells[(a, p)].error) for p in s.problems}
                     for a in s.algorithms},
        "time": {labels[a]: {p: _num(cells[(a, p)].traversals) for p in s.problems}
                 for a in s.algorithms},
        "time_epochs": {labels[a]: {p: _num(cells[(a, p)].epochs) for p in s.problems}
                        for a in s.algorithms},
        "time_cpu_seconds": {labels[a]: {p: _num(cells[(a, p)].cpu_seconds)
                                         for p in s.problems} for a in s.algorithms},
        "successes": {labels[a]: {p: [cells[(a, p)].successes, cells[(a, p)].n_runs]
                                  for p in s.problems} for a in s.algorithms},
        "selected_configurations": {labels[a]: {p: list(cells[(a, p)].selected)
                                                for p in s.problems} for a in s.algorithms},
        "friedman": None if f is None else {
            "statistic": float(f.statistic), "pvalue": float(f.pvalue),
            "mean_ranks": dict(zip(f.algorithms, map(float, f.mean_ranks))),
            "alpha": f.alpha, "critical_difference": float(f.critical_difference),
            "cliques": [list(c) for c in f.cliques]},
        "profiles": profiles,
        "scores": {labels[a]: {"error": float(result.error_profiles.scores[i]),
                               "time": float(result.time_profiles.scores[i])}
                   for i, a in enumerate(s.algorithms)},
        "r_max": result.error_profiles.r_max,
        "bayes": {"prior": PRIOR, "prior_note": "Dirichlet process, pseudo-observation at 0",
                  "rope": s.rope, "rope_unit": "percentage points of the selected error",
                  "pairs": [{"a": labels[c.a], "b": labels[c.b],
                             "p_a_better": _num(c.p_a_better),
                             "p_equivalent": _num(c.p_equivalent),
                             "p_b_better": _num(c.p_b_better), "verdict": c.bayes_verdict}
                            for c in result.pairs]},
        "lacoste": [{"a": labels[c.a], "b": labels[c.b], "p_a_better": c.lacoste,
                     "problems": c.lacoste_problems, "verdict": c.lacoste_verdict}
                    for c in result.pairs],
        "curves": {labels[a]: {p: {"k": cells[(a, p)].curve.k.tolist(),
                                   "expected": [_num(v) for v in cells[(a, p)].curve.expected],
                                   "low": [_num(v) for v in cells[(a, p)].curve.low],
                                   "high": [_num(v) for v in cells[(a, p)].curve.high]}
                               for p in s.problems} for a in s.algorithms},
        "verdicts": list(result.verdicts),
        "baselines": result.baselines,
        **({"rules": list(result.rules)} if result.rules else {}),
        "run": {"cells_trained": result.n_trained, "cells_resumed": result.n_resumed,
                "backend": result.backend, "wall_seconds": result.wall_time},
    }


def _csv(result):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for row in result.rows:
        w.writerow(["" if row[c] is None else (repr(row[c]) if isinstance(row[c], float)
                                                else row[c]) for c in CSV_COLUMNS])
    return buf.getvalue()


def _md_table(heads, rows):
    out = ["| " + " | ".join(heads) + " |", "|" + "|".join("---" for _ in heads) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _selected(cell):
    """The configurations a cell's studies selected: one text, or each with its studies."""
    studies = {}
    for k, c in enumerate(cell.selected, 1):
        studies.setdefault(c, []).append(str(k))
    if len(studies) == 1:
        return next(iter(studies))
    return "; ".join(f"{c} (stud{'y' if len(k) == 1 else 'ies'} {', '.join(k)})"
                     for c, k in studies.items())


def _problem_rows(result, p):
    generated = result.suite.is_generated(p)
    no_target = not generated and result.targets[p] is None
    rows = []
    for a in result.suite.algorithms:
        c = result.cells[(a, p)]
        error = [_text(c.error), _text(c.validation)]
        if not generated:              # (a Proben1 error is infinite where runs diverged)
            error = [e.replace("missed", "diverged") for e in error]
        times = ([_text(c.epochs), _text(c.traversals), _text(c.cpu_seconds, 3),
                  f"{c.successes}/{c.n_runs}"] if not no_target else ["no target"] * 3 + ["-"])
        rows.append([result.labels[a], *error, *times, str(c.diverged), _selected(c)])
    return rows


def _problem_heads(result, p):
    if result.suite.is_generated(p):
        return ("algorithm", "failed runs %", "epochs to success", "epochs",
                "traversals", "CPU s", "successes", "diverged (all configurations)",
                "selected configuration")
    return ("algorithm", "test error", "validation error", "epochs", "traversals",
            "CPU s", "on target", "diverged (all configurations)", "selected configuration")


#: How the tables' times are taken, and when they read "missed" (the medians' rule).
MISSED_RULE = ("Times to target are medians over the selected configuration's runs, then over "
               "the studies: 'missed' where half of them or more missed the target (a median "
               "is a miss once half of its values or more are misses); 'on target' counts "
               "the selected configurations' runs that reached it, all studies; 'diverged "
               "(all configurations)' counts the runs that diverged in every configuration "
               "the studies tried, not the selected ones' alone.")


def _caption(result, p):
    """What a problem's table measures and its target."""
    s = result.suite
    t = result.targets[p]
    if s.is_generated(p):
        return (f"Generated task: success {s.to_dict()['generated_success']} within "
                f"{s.limit} epochs; error = percentage of failed runs. 'missed': half of "
                "the runs or more failed. 'successes' counts the selected configurations' "
                "runs, all studies; 'diverged (all configurations)' the runs that diverged in "
                "every configuration the studies tried.")
    if t is None:
        return ("No target: every algorithm's selected configurations diverged on this "
                "problem (half of their runs or more), so no time to target is measured.")
    how = ("fixed per problem: the frozen targets, which do not move with the algorithms"
           if isinstance(s.target, dict) else "given by --target" if s.target is not None
           else "the median over the algorithms that have one of their selected "
           "configurations' best validation errors")
    return f"Target: validation error {_text(t)} ({how}). {MISSED_RULE}"


def _heading(result, p):
    t = result.targets[p]
    if result.suite.is_generated(p):
        return "success 40-20-40"
    return "no target" if t is None else f"target validation error {_text(t)}"


def _setup_value(k, v):
    """A set-up value as the page shows it (what None means, not "None")."""
    if k == "max_epochs" and v is None:
        return "Proben1's 3000, stopped by its early-stopping rule (no lower cap)"
    if k == "target" and v is None:
        return ("per problem, the median over the algorithms of their selected "
                "configurations' best validation errors")
    if v is None:
        return "-"
    return json.dumps(v) if isinstance(v, (list, dict)) else str(v)


def _decision(c, labels):
    """The Bayesian signed-rank test's decision in a word or two."""
    from fastnet.suite._analyse import BAYES_DECISION

    probs = (c.p_a_better, c.p_equivalent, c.p_b_better)
    if not all(math.isfinite(p) for p in probs):
        return "not made"
    words = (f"{labels[c.a]} better", "equivalent", f"{labels[c.b]} better")
    best = max(range(3), key=probs.__getitem__)
    return words[best] if probs[best] > BAYES_DECISION else "undecided"


def _few_note(s):
    """The caveat of comparisons across few problems (empty for enough)."""
    from fastnet.suite._analyse import FEW_PROBLEMS

    n = len(s.problems)
    if n >= FEW_PROBLEMS:
        return ""
    return (f" These comparisons rest on {plural(n, 'problem')} only: fewer than {FEW_PROBLEMS}"
            " decide little, whatever the probabilities say.")


def _provenance(result):
    """What came from a baseline database and which machines measured the CPU times
    (empty when every algorithm was trained here)."""
    from fastnet._provenance import machine_description

    b = result.baselines
    if not b:
        return ""
    new = [result.labels[a] for a in result.suite.algorithms if a not in b["algorithms"]]
    return (f"The numbers of the {plural(len(b['algorithms']), 'baseline')} "
            f"({', '.join(result.labels[a] for a in b['algorithms'])}) come from the baseline "
            f"database ({b['where']}; fastnet {b['fastnet']}, made {b['created']} by "
            f"`{b['command']}`); only {', '.join(new)} {'was' if len(new) == 1 else 'were'} "
            "trained here. The baselines' CPU "
            f"times were measured on {b['machine']}, the others' on this machine "
            f"({machine_description()}): compare CPU times across them with care. The verdicts "
            "rest on errors and connection traversals, which no machine changes.")


def _rules_sentence(result):
    """Which algorithms are rules of the user's own, from which files (their SHA-256)."""
    files = "; ".join(f"{', '.join(r['algorithms'])} from {r['file']} (SHA-256 {r['sha256']})"
                      for r in result.rules)
    return f"Rules from rules files (the user's own code): {files}."


def _title(s):
    return (f"fastnet suite: {plural(len(s.algorithms), 'algorithm')} x "
            f"{plural(len(s.problems), 'problem')}")


def _budget(s):
    return (f"Budget {plural(s.budget, 'configuration')} x {plural(s.studies, 'study', 'studies')}"
            f", {plural(s.runs, 'run')} each")


def _lacoste_decision(c, labels):
    from fastnet.suite._analyse import LACOSTE_DECISION

    if c.lacoste is None:
        return "not made"
    if c.lacoste > LACOSTE_DECISION:
        return f"{labels[c.a]} better"
    if 1 - c.lacoste > LACOSTE_DECISION:
        return f"{labels[c.b]} better"
    return "undecided"


def _pairs_summary(result):
    """(a sentence counting the pairs by what each test decided, the pairs where either
    test found one algorithm better): many algorithms make many pairs, most of them
    equivalent or undecided, so only the decided ones are listed by name."""
    from collections import Counter

    labels = result.labels
    bayes = Counter()
    lacoste = Counter()
    decided = []
    for c in result.pairs:
        b, lac = _decision(c, labels), _lacoste_decision(c, labels)
        bayes["better" if b.endswith(" better") else b] += 1
        lacoste["better" if lac.endswith(" better") else lac] += 1
        if b.endswith(" better") or lac.endswith(" better"):
            decided.append(c)

    def counted(counts, words):
        return ", ".join(f"{counts[k]} {w}" for k, w in words if counts[k])

    n = len(result.pairs)
    text = (f"{plural(n, 'pair')}. Selected error: "
            + counted(bayes, (("better", "with one algorithm better"),
                              ("equivalent", "equivalent (within the ROPE)"),
                              ("undecided", "undecided"), ("not made", "not tested")))
            + ". Test classification: "
            + counted(lacoste, (("better", "with one algorithm better"),
                                ("undecided", "undecided"), ("not made", "not tested")))
            + "." + _few_note(result.suite) + " "
            + ("The pairs where a test found one algorithm better:" if decided else
               "No test found one algorithm better than another."))
    return text, decided


def summary_markdown(result):
    """The suite's results as Markdown (what ``fastnet suite`` prints).

    Parameters
    ----------
    result : SuiteResult

    Returns
    -------
    str
    """
    s = result.suite
    out = [f"# {_title(s)}", "", f"{_budget(s)}, master seed {s.seed}.", ""]
    if result.rules:
        out += [_rules_sentence(result), ""]
    if result.baselines:
        out += [_provenance(result), ""]
    out += ["## Verdicts", ""]
    out += [f"* {v}" for v in result.verdicts]
    out += ["", "## Across problems", ""]
    f = result.friedman
    rows = []
    for i, a in enumerate(s.algorithms):
        rows.append([result.labels[a], f"{result.error_profiles.scores[i]:.3f}",
                     f"{result.error_profiles.won[i]:.2f}",
                     f"{result.time_profiles.scores[i]:.3f}",
                     f"{result.time_profiles.won[i]:.2f}",
                     "-" if f is None else f"{f.mean_ranks[i]:.2f}"])
    out.append(_md_table(("algorithm", "error score", "error won", "time score (traversals)",
                          "time won", "mean rank (error)"), rows))
    if f is not None:
        out += ["", f"Friedman chi2 = {f.statistic:.4g}, p = {f.pvalue:.3g}; Nemenyi CD = "
                f"{f.critical_difference:.3f} (alpha {f.alpha})."]
    out += ["", "Pairs (Bayesian signed-rank test, prior strength 0.5 at 0, ROPE "
            f"±{s.rope:g} percentage points; Lacoste's Poisson-binomial test):", ""]
    text, decided = _pairs_summary(result)
    out += [text, ""]
    out += [f"* {result.labels[c.a]} vs {result.labels[c.b]}: {c.bayes_verdict}; "
            f"{c.lacoste_verdict}" for c in decided]
    for p in s.problems:
        out += ["", f"## {p} ({_heading(result, p)})", "",
                _md_table(_problem_heads(result, p), _problem_rows(result, p)), "",
                _caption(result, p)]
    return "\n".join(out) + "\n"


def suite_html(result, *, pictures=True):
    """The suite's self-contained HTML page.

    Parameters
    ----------
    result : SuiteResult
    pictures : bool, default True
        Draw the pictures (needs matplotlib).

    Returns
    -------
    str
    """
    from fastnet._version import __version__
    from fastnet.report._html import _e, _figure, _kv_table, _page, _plots, _simple_table

    s = result.suite
    title = _title(s)
    body = [f"<h1>{_e(title)}</h1>",
            f'<p class="sub">{_e(_budget(s))}, master seed {s.seed}. Selection by validation '
            "error (Proben1), never by test error.</p>"]
    if result.rules:
        body.append(f'<p class="sub" id="rules">{_e(_rules_sentence(result))}</p>')
    if result.baselines:
        body.append(f'<p class="sub" id="baselines">{_e(_provenance(result))}</p>')
    body += ['<h2 id="verdicts">Verdicts</h2>', "<ul>"]
    body += [f"<li>{_e(v)}</li>" for v in result.verdicts]
    body.append("</ul>")
    cd = profiles = None
    curves = []
    if pictures:
        from fastnet.suite._pictures import pictures as _pictures

        cd, profiles, curves = _pictures(result, _plots())
    body.append('<h2 id="ranks">Ranks: Friedman and Nemenyi (Demšar 2006)</h2>')
    f = result.friedman
    if cd is not None:
        body.append(_figure(cd, "critical-difference diagram",
                            f"Mean ranks of the selected errors over {len(s.problems)} problems "
                            f"(1 best). Bars join algorithms closer than the critical "
                            f"difference CD = {f.critical_difference:.2f}; Friedman chi2 = "
                            f"{f.statistic:.3g}, p = {f.pvalue:.3g}."))
    elif f is None:
        body.append("<p>Ranks need at least two algorithms and two problems.</p>")
    body.append('<h2 id="profiles">Performance profiles (Dolan &amp; Moré 2002)</h2>')
    if profiles is not None:
        body.append(_figure(profiles, "performance profiles of error and time to target",
                            "Share of problems on which each algorithm is within a factor τ "
                            "of the best: left the selected error, right the time to target in "
                            "connection traversals. The key gives AlgoPerf's score, the "
                            "profile's mean over τ from 1 to 4."))
    prow = [[result.labels[a], f"{result.error_profiles.scores[i]:.3f}",
             f"{result.error_profiles.won[i]:.2f}", f"{result.time_profiles.scores[i]:.3f}",
             f"{result.time_profiles.won[i]:.2f}",
             "-" if f is None else f"{f.mean_ranks[i]:.2f}"]
            for i, a in enumerate(s.algorithms)]
    body.append(_simple_table("scores-table", ("algorithm", "error score", "error: share won",
                                               "time score", "time: share fastest",
                                               "mean rank"), prow))
    body.append('<h2 id="pairs">Pairs</h2>')
    body.append(_simple_table(
        "pairs-table", ("A", "B", "selected error", "test classification", "P(A better)",
                        "P(equivalent)", "P(B better)", "Lacoste P(A better)"),
        [[result.labels[c.a], result.labels[c.b], _decision(c, result.labels),
          _lacoste_decision(c, result.labels), probability(c.p_a_better),
          probability(c.p_equivalent), probability(c.p_b_better), probability(c.lacoste)]
         for c in result.pairs],
        f"Selected error: the Bayesian signed-rank test (Benavoli et al. 2017) on the selected "
        f"errors, Dirichlet process prior of strength 0.5 with its pseudo-observation at 0, "
        f"ROPE ±{s.rope:g} percentage points; it decides above 0.95. Test classification: "
        "Lacoste et al. (2012)'s Poisson-binomial test over the Proben1 classification "
        "problems, from a representative network's test predictions (median study, median "
        "run); it decides above 0.85." + _few_note(s), numeric_from=4))
    text, decided = _pairs_summary(result)
    body.append(f"<p>{_e(text)}</p>")
    if decided:
        body += ["<ul>"] + [f"<li>{_e(result.labels[c.a])} vs {_e(result.labels[c.b])}: "
                            f"{_e(c.bayes_verdict)}; {_e(c.lacoste_verdict)}</li>"
                            for c in decided] + ["</ul>"]
    body.append('<h2 id="tuning">Tuning: expected best after k configurations '
                '(Dodge et al. 2019)</h2>')
    for png in curves:
        body.append(_figure(png, "expected best validation result after k configurations",
                            "Expected best of k configurations drawn from all studies' "
                            "configurations, with its 95 % bootstrap band. Proben1: median "
                            "best validation error; generated tasks: median epochs to success "
                            "(failures counted at the limit)."))
    body.append('<h2 id="problems">Per problem</h2>')
    for p in s.problems:
        body.append(f"<h3>{_e(p)}</h3>")
        body.append(_simple_table(f"problem-{p}", _problem_heads(result, p),
                                  _problem_rows(result, p), _caption(result, p)))
    setup = [(k, _setup_value(k, v)) for k, v in s.to_dict().items()]
    setup += [(f"data {p}", sha) for p, sha in result.data_sha256.items() if sha]
    setup += [(f"rules file {r['file']}", f"{', '.join(r['algorithms'])} (SHA-256 "
               f"{r['sha256']})") for r in result.rules]
    body += ['<h2 id="setup">Set-up</h2>', _kv_table("setup-table", setup)]
    return _page(title, "\n".join(body), __version__)


def _temporary(path, data):
    """``data`` written, flushed and synced to a new temporary file beside ``path``; its
    name. On failure nothing is left and the OSError names ``path``."""
    import contextlib
    import os
    import tempfile

    from fastnet._files import new_file_mode

    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, new_file_mode())
        return tmp
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OSError(exc.errno, f"{path}: cannot write it ({exc.strerror or exc})") from None
        raise


def _replace_all(out, files):
    """Write ``{name: bytes}`` into ``out`` as one set: every file to a temporary first,
    then each renamed over the old one. If a temporary cannot be written (a full disk)
    the temporaries are removed and the old files stay, all of them; if a rename fails,
    the files already replaced get their old contents back (kept as hard links)."""
    import contextlib
    import os

    temps, backups, done = {}, {}, []
    try:
        for name, data in files.items():
            temps[name] = _temporary(out / name, data)
        for name in files:
            if (out / name).is_file():
                backups[name] = f"{temps[name]}.old"
                os.link(out / name, backups[name])
        for name in files:
            os.replace(temps[name], out / name)
            del temps[name]
            done.append(name)
    except BaseException as exc:
        for name in done:                 # (put the old files back)
            with contextlib.suppress(OSError):
                if name in backups:
                    os.replace(backups.pop(name), out / name)
                else:
                    os.unlink(out / name)
        for tmp in list(temps.values()) + list(backups.values()):
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(exc, OSError):
            what = exc.strerror if exc.filename is None else f"{exc.filename}: {exc.strerror}"
            raise OSError(exc.errno, f"{what}; no "
                          f"output was replaced (the cells are kept in {out / 'cells'}: "
                          "rerun to write the outputs)") from None
        raise
    for tmp in backups.values():
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    from fastnet._files import fsync_dir

    fsync_dir(out)


def write_suite(result, out, *, pictures=True):
    """Write a suite's outputs into a directory as one set.

    Parameters
    ----------
    result : SuiteResult
    out : str or os.PathLike
        An existing directory; it receives ``suite.html`` (one self-contained page:
        the critical-difference diagram, the performance profiles, the tuning curves
        and a table per problem), ``scores.csv`` (one row per trained run),
        ``suite.json`` (set-up, version, machine and every result) and ``summary.md``.
    pictures : bool, default True
        Draw the pictures (needs matplotlib).

    Raises
    ------
    ImportError
        If ``pictures`` and matplotlib is not installed.
    OSError
        If a file cannot be written (a full disk: the message names the file). Every
        file is written to a temporary first and all are renamed only once all are
        written, so a failure leaves the old outputs, none of the new ones beside them.
    """
    out = Path(out)
    files = {"summary.md": summary_markdown(result), "scores.csv": _csv(result),
             "suite.json": json.dumps(suite_json(result), indent=1, allow_nan=False) + "\n",
             "suite.html": suite_html(result, pictures=pictures)}
    _replace_all(out, {name: text.encode("utf-8") for name, text in files.items()})
