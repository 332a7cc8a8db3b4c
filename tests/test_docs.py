"""The documentation's examples run and give what they show.

Every ``pycon`` block of a page in ``docs/`` is a doctest; the blocks of one page run
in order in one namespace, in a temporary directory. Pages whose examples load
Proben1 files get the data directory through ``FASTNET_DATA``.
"""
import doctest
import re
from pathlib import Path

import pytest
from _extras import needs

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(p.name for p in DOCS.glob("*.md"))
# Pages whose examples read Proben1 files.
NEEDS_PROBEN1 = {"quickstart.md", "stopping.md", "proben1.md", "experiments.md", "statistics.md",
                 "performance.md", "baselines.md"}
# Pages whose examples need optional packages (skipped without them, failed under
# FASTNET_REQUIRE_EXTRAS=1).
NEEDS_EXTRAS = {"experiments.md": ("pandas", "matplotlib"), "statistics.md": ("pandas", "matplotlib")}
# Pages whose examples need more than the installed package; a test of their own runs them.
NOT_RUN = {"cython.md": "compiles an extension (tests/test_embedding.py runs it)"}
# Fenced ```pycon blocks (the fence may carry more backticks or be indented by a list).
_PYCON = re.compile(r"^(?P<indent>[ ]*)(?P<fence>`{3,})pycon[ ]*\n(?P<body>.*?)^(?P=indent)(?P=fence)[ ]*$",
                    re.MULTILINE | re.DOTALL)
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _examples(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    blocks = []
    for m in _PYCON.finditer(text):
        indent = len(m.group("indent"))
        lineno = text.count("\n", 0, m.start()) + 2
        body = "\n".join(line[indent:] for line in m.group("body").splitlines())
        blocks.append((lineno, body))
    return blocks


@pytest.mark.parametrize("page", [p for p in PAGES if _examples(p) and p not in NOT_RUN])
def test_page_examples(page, tmp_path, monkeypatch, request):
    for module in NEEDS_EXTRAS.get(page, ()):
        needs(module)
    if page in NEEDS_PROBEN1:
        monkeypatch.setenv("FASTNET_DATA", str(request.getfixturevalue("proben1_root")))
    monkeypatch.chdir(tmp_path)   # examples that write files write them here
    parser, globs = doctest.DocTestParser(), {"__name__": f"docs.{page}"}
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    for lineno, body in _examples(page):
        test = parser.get_doctest(body, globs, f"{page}:{lineno}", str(DOCS / page), lineno)
        runner.run(test, clear_globs=False)
        globs = test.globs   # DocTest copies its globals: carry them to the next block
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} example(s) of docs/{page} failed (see above)"


def test_lbfgs_examples_hold_scipys_blas_at_one_thread():
    """L-BFGS-B's own BLAS calls on short vectors only lose to OpenBLAS's threads (500
    iterations through an Objective: 3.05 s with the default threads on a busy two-core
    machine, 0.043 s with one): every example that runs it does so under
    threadpool_limits(1), and the page says why."""
    from fastnet import _objective

    found = 0
    for page in PAGES:
        for _, body in _examples(page):
            lines = body.splitlines()
            for i, line in enumerate(lines):
                if 'method="L-BFGS-B"' in line and "minimize(" in line:
                    found += 1
                    assert line.startswith("...     ") and i > 0 and lines[i - 1].startswith(
                        ">>> with threadpool_limits(1)"), f"docs/{page}: {line}"
    assert found >= 1
    text = (DOCS / "embedding.md").read_text(encoding="utf-8")
    assert "Why `threadpool_limits(1)`" in text and "0.043 s with one" in text
    assert "with threadpool_limits(1):" in _objective.Objective.__doc__


def test_pages_with_examples_are_found():
    assert "quickstart.md" in PAGES and _examples("quickstart.md")


@pytest.mark.parametrize("page", sorted(p.relative_to(DOCS).as_posix() for p in DOCS.glob("*.*")
                                        if p.suffix in (".md", ".rst", ".py")))
def test_pages_cite_no_internal_files(page):
    """Pages cite papers and public sources, never project-internal documents."""
    text = (DOCS / page).read_text(encoding="utf-8")
    for word in ("SPEC", "PEERS.md", "../shared", "/work"):
        assert word not in text, f"docs/{page} mentions {word!r}"


def test_proben1_table_matches_the_registry():
    """The problem table of docs/proben1.md is the registry's (Prechelt 1994, Table 7)."""
    from fastnet.datasets import PROBEN1_PROBLEMS

    text = (DOCS / "proben1.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in PROBEN1_PROBLEMS:
            rows[cells[0]] = cells[1:]
    assert set(rows) == set(PROBEN1_PROBLEMS)
    for name, p in PROBEN1_PROBLEMS.items():
        pivots = (" / ".join(f"{a.spec} ({a.connections})" for a in p.pivots)
                  if p.pivots else "none")
        assert rows[name] == [p.kind, str(p.n_in), str(p.n_out),
                              f"{p.n_examples} ({p.n_train} / {p.n_val} / {p.n_test})", pivots]


def _api_signature(obj):
    """``obj``'s signature as the API pages show it (autodoc's steps, then fastnet_docs')."""
    pytest.importorskip("sphinx")
    import sys
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import fastnet_docs
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    from sphinx.util.inspect import signature, stringify_signature

    sig = signature(obj, type_aliases=fastnet_docs.TYPE_ALIASES)
    return fastnet_docs.readable_signature(stringify_signature(sig)), fastnet_docs


@pytest.mark.parametrize("name", ["fastnet.train_rprop", "fastnet.train_rprop_many", "fastnet.train_backprop",
                                  "fastnet.measures.nmse", "fastnet.MLP.predict", "fastnet.MLP"])
def test_api_signatures_name_the_type_aliases(name):
    """Signatures say ``X: ArrayLike``, not NumPy's union of ~600 characters per argument."""
    import importlib

    module, _, attr = name.rpartition(".")
    if module == "fastnet.MLP":
        module, attr = "fastnet", f"MLP.{attr}"
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    text, fastnet_docs = _api_signature(obj)
    assert not fastnet_docs.EXPANDED_ALIAS.search(text), text
    assert "<class" not in text, text
    if name != "fastnet.MLP":
        assert re.search(r"\bX: ArrayLike\b|\bY_pred: ArrayLike\b", text), text
    if name in ("fastnet.train_rprop", "fastnet.train_rprop_many", "fastnet.train_backprop"):
        assert "X_val: ArrayLike | None = None" in text
        assert "net" in text and "MLP" in text


def test_readable_signature_shortens_what_autodoc_leaves():
    """A signature the Python domain cannot parse (``<preset or default>``) is shown raw:
    its ``~`` prefixes and alias wrappers must not reach the page."""
    _, fastnet_docs = _api_signature(len)
    raw = ("(net: ~fastnet.network.MLP, X_val: TypeAliasForwardRef('ArrayLike') | None = None, "
           "stop: ~fastnet.stopping.StoppingCriterion | None = <preset or default>, "
           "dtype: type = <class 'numpy.float64'>)")
    assert fastnet_docs.readable_signature(raw) == (
        "(net: MLP, X_val: ArrayLike | None = None, stop: StoppingCriterion | None = <preset or default>, "
        "dtype: type = float64)")


# -- the documentation's claims about presets and stopping rules, against the code --------

def _rule_terms(text):
    """The criteria a rule written for people names: ``{"GL2", "P<0.1"}`` for
    "GL2 or $P_5 < 0.1$ or 3000 epochs" (the epoch limit is left out)."""
    text = re.sub(r"[\s$_]", "", text)
    terms = set(re.findall(r"(?:GL|UP|PQ)\d+(?:\.\d+)?", text))
    if re.search(r"P5(?:\(t\))?<0\.1", text):
        terms.add("P<0.1")
    if "GL/P5>3" in text:
        terms.add("PQ3")
    return terms


def _criterion_terms(criterion):
    return set(re.findall(r"(?:GL|UP|PQ)\d+(?:\.\d+)?|P<0\.1", criterion.name))


def test_rule_terms_read_what_people_write():
    assert _rule_terms("GL5 or $P_5 < 0.1$ or 3000 epochs") == {"GL5", "P<0.1"}
    assert _rule_terms("$P_5(t) < 0.1$ or 3000 epochs, or once $GL_5$, $UP_8$ and $PQ_3$ have each held") == {
        "P<0.1", "GL5", "UP8", "PQ3"}


def _table_rows(page, first_cell):
    """The cells of the rows of a Markdown table on ``page`` whose cell matches ``first_cell``."""
    rows = []
    for line in (DOCS / page).read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and any(re.search(first_cell, c) for c in cells):
            rows.append(cells)
    return rows


def test_training_page_preset_table_matches_the_presets():
    from fastnet.rprop import PRESETS, proben1_stopping

    rows = {re.search(r'"(proben1-[\w-]+)"', r[0]).group(1): r
            for r in _table_rows("training.md", r'^`"proben1-[\w-]+"`$')}
    assert set(rows) == set(PRESETS)
    for name, (_, variant, eta_plus, delta0, init, rule) in rows.items():
        preset = PRESETS[name]
        assert variant == preset["variant"], name
        assert float(eta_plus) == preset["eta_plus"], name
        assert tuple(float(x) for x in re.findall(r"[\d.]+", delta0)) == preset["delta0"], name
        assert float(init.lstrip("±")) == preset["init_scale"], name
        assert _rule_terms(rule) == _criterion_terms(proben1_stopping(preset["stop"])), name
    # "All three use eta- = 0.5, Delta_max = 50, Delta_min = 0, strips of 5 epochs and at most 3000 epochs"
    for preset in PRESETS.values():
        assert (preset["eta_minus"], preset["delta_max"], preset["delta_min"], preset["strip"],
                preset["max_epochs"]) == (0.5, 50.0, 0.0, 5, 3000)


def test_stopping_page_rule_table_matches_the_presets():
    from fastnet.rprop import PRESETS, proben1_stopping

    rows = _table_rows("stopping.md", r'preset `"proben1-[\w-]+"`')
    assert len(rows) == len(PRESETS)
    for _, rule, where in rows:
        name = re.search(r'"(proben1-[\w-]+)"', where).group(1)
        assert _rule_terms(rule) == _criterion_terms(proben1_stopping(PRESETS[name]["stop"])), name


@pytest.mark.parametrize("where", ["RpropClassifier", "RpropRegressor", "embedding.md"])
def test_estimator_docs_state_each_named_stop_rule_as_it_runs(where):
    """The estimators' ``stop`` names (the issue: the page said "multilayer" was
    "P5<0.1, or ever GL5, UP8 and PQ3" while it runs GL2; "multilayer-literal" was
    accepted but undocumented)."""
    needs("sklearn")
    from fastnet import sklearn as fsk
    from fastnet.rprop import proben1_stopping

    text = (DOCS / where).read_text(encoding="utf-8") if where.endswith(".md") else getattr(fsk, where).__doc__
    claims = dict(re.findall(r'`"(linear|multilayer|multilayer-literal)"`+ \(([^()]*)\)', text))
    assert set(claims) == set(fsk.STOP_NAMES) - {"auto"}
    for name, rule in claims.items():
        assert _rule_terms(rule) == _criterion_terms(proben1_stopping(name)), (name, rule)


@pytest.mark.parametrize("networks, heading", [("linear", "Tables 3-4"), ("pivot", "Tables 8-9"),
                                               ("noshortcut", "Tables 10-11")])
def test_reproduction_page_shows_the_published_means(networks, heading):
    """Each "fastnet beside Prechelt (1994)" table of docs/reproduction.md holds every
    published file once, with the shipped published means (Prechelt 1994) in every
    column; the pivot section's deviations table holds the published test-error and
    epoch means and deviations."""
    from fastnet.reproduction import COLUMNS, published_results

    def _fmt(v):   # the tables' numbers: two decimals, whole numbers from 100 on
        return f"{v:.2f}" if abs(v) < 100 else f"{v:.0f}"

    pub = published_results(networks)
    text = (DOCS / "reproduction.md").read_text(encoding="utf-8")
    sections = [s for s in text.split("\n## ") if s.startswith("fastnet beside Prechelt (1994)")
                and s.splitlines()[0].endswith(heading)]
    assert len(sections) == 1
    column = {head: col for _, col, head, _ in COLUMNS}
    header, seen, spread = None, [], set()
    for line in sections[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:2] in (["file", "runs"], ["file", "network"]):
            header = cells
        elif header and cells[0] in pub and header[1] == "runs":
            seen.append(cells[0])
            for head, cell in zip(header[2:], cells[2:]):
                mean = pub[cells[0]].get(column[head])
                assert cell == "–" if mean is None else cell.split(" / ")[1][:-2] == _fmt(mean[0]), \
                    (cells[0], head, cell)
        elif header and cells[0] in pub:
            spread.add(cells[0])
            (te, te_sd), (ep, ep_sd) = pub[cells[0]]["te"], pub[cells[0]]["epochs"]
            assert (cells[3], cells[5]) == (f"{te:.2f} ({te_sd:.2f})", f"{ep:.0f} ({ep_sd:.0f})"), cells
    assert sorted(seen) == sorted(pub)
    assert spread == (set(pub) if networks == "pivot" else set())
