"""A study's per-trial data as files: ``trials.csv`` and ``study.json``, written column
by column (a million trials in seconds)."""
from __future__ import annotations

import csv
import io
import json
import math
import numpy as np


def _trials_csv(result):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["algorithm", "trial", "epochs", "success", "time_to_success", "cpu_time",
                "diverged", "traversals", "flops"])
    for a in result.algorithms:
        one = io.StringIO()
        csv.writer(one, lineterminator="").writerow([a.spec])       # (quoted as csv quotes)
        name = one.getvalue().replace("%", "%%")         # (a format below)
        # (columns made text whole, then joined: no csv call per trial)
        epochs = a.epochs.astype(np.int64).tolist()
        ok = a.success.astype(bool).tolist()
        to_success = [str(e) if s else "" for e, s in zip(epochs, ok)]
        cpu = map(repr, a.cpu_time.astype(float).tolist())
        diverged = a.diverged.astype(np.int64).tolist()
        trav, flops = (_counts_text(v) for v in (a.traversals, a.flops))
        ok = map(int, ok)
        buf.writelines(map(f"{name},%d,%d,%d,%s,%s,%d,%s,%s\n".__mod__,
                           zip(range(len(epochs)), epochs, ok, to_success, cpu, diverged, trav,
                               flops)))
    return buf.getvalue()


def _counts_text(values):
    """Whole counts as text, "" where unknown (NaN)."""
    values = np.asarray(values, dtype=float)
    known = np.isfinite(values)
    whole = np.where(known, values, 0).astype(np.int64).tolist()
    if known.all():
        return list(map(str, whole))
    return [str(v) if k else "" for v, k in zip(whole, known.tolist())]


def _json_list(values):
    """A JSON array of numbers in one line (null where not finite), as ``json.dumps``
    writes each number."""
    values = np.asarray(values)
    if values.dtype.kind in "biu":
        return "[" + ", ".join(map(str, values.astype(np.int64).tolist())) + "]"
    known = np.isfinite(values)
    if known.all():
        return "[" + ", ".join(map(repr, values.tolist())) + "]"
    return "[" + ", ".join(repr(v) if k else "null"
                           for v, k in zip(values.tolist(), known.tolist())) + "]"


def _json(result, *, placeholders=False):
    def num(v):
        v = float(v)
        return v if math.isfinite(v) else None

    algos = []
    for a in result.algorithms:
        h = a.hamey
        algos.append({
            "algorithm": a.spec, "best_in_grid": a.best_in_grid,
            "hamey": {"n_trials": h.n_trials, "n_successes": h.n_successes,
                      "success_rate": num(h.success_rate), "optimal_limit": num(h.optimal_limit),
                      "peak_efficiency": num(h.peak_efficiency),
                      "efficiency_range": [num(x) for x in h.efficiency_range],
                      "range_censored": bool(h.range_censored),
                      "fahlman_average": num(h.fahlman_average), "model_status": h.status,
                      "asymptotic_success_rate": num(h.asymptotic_success_rate),
                      "corrected_mean": num(h.corrected_mean),
                      "corrected_median": num(h.corrected_median),
                      "mean_time": num(h.mean_time), "median_time": num(h.median_time)},
            "epochs_description": None if a.epochs_description is None else {
                k: num(v) for k, v in a.epochs_description.as_dict().items()},
            "cpu_description": None if a.cpu_description is None else {
                k: num(v) for k, v in a.cpu_description.as_dict().items()},
            "cost_per_epoch": {k: num(a.cost_per_epoch(k))
                               for k in ("traversals", "flops", "CPU time")},
            # (placeholders: `_json_text` writes each column in one line)
            "trials": ({k: f"@@{len(algos)}:{k}@@" for k in _TRIAL_COLUMNS} if placeholders
                       else {k: json.loads(text) for k, text in _trial_columns(a).items()})})
    # (the dtype always: the identity names it only where it is not float64)
    return {"study": {**result.study.identity(result.data_sha256), "dtype": result.study.dtype},
            "task": result.task_name,
            "layer_sizes": list(result.layer_sizes), "algorithms": algos,
            "cost_unit": result.cost_unit, "cost_reason": result.cost_reason,
            "logrank": [{"a": t.a, "b": t.b, "unit": t.unit, "statistic": num(t.statistic),
                         "pvalue": num(t.pvalue), "pvalue_holm": num(t.pvalue_holm),
                         "median_ratio": num(t.median_ratio), "median_bound": t.median_bound,
                         "median_ratio_interval": [num(x) for x in t.median_ratio_interval],
                         "better": t.better, "curves_cross": num(t.curves_cross),
                         "ahead_before": t.ahead_before} for t in result.logrank],
            **({"rules": list(result.rules)} if result.rules else {})}


_TRIAL_COLUMNS = ("epochs", "success", "cpu_time", "diverged", "traversals", "flops")


def _trial_columns(a):
    """{column: JSON array text} of one algorithm's trials (counts whole, or null)."""
    return {"epochs": _json_list(a.epochs), "success": _json_list(a.success.astype(np.int64)),
            "cpu_time": _json_list(a.cpu_time.astype(float)),
            "diverged": _json_list(a.diverged.astype(np.int64)),
            "traversals": "[" + ", ".join(t or "null" for t in _counts_text(a.traversals)) + "]",
            "flops": "[" + ", ".join(t or "null" for t in _counts_text(a.flops)) + "]"}


def _json_text(result):
    """``study.json``: `_json` indented, each trial column one line of numbers (a study of
    a million trials: a JSON encoder call per number would take seconds)."""
    text = json.dumps(_json(result, placeholders=True), indent=1) + "\n"
    for k, a in enumerate(result.algorithms):
        for name, column in _trial_columns(a).items():
            text = text.replace(f'"@@{k}:{name}@@"', column, 1)
    return text
