"""The HTML report and comparison in a real headless Chromium (selenium + chromedriver).

The page loads from a file:// URL, the browser console shows no error, every picture is
decoded and shown, the tables and headings are there, the page fetched nothing, and the
text of a malicious label is shown, not run.

Without Chromium, chromedriver or selenium the tests are skipped, unless
``FASTNET_REQUIRE_BROWSER=1`` (as in CI): then they fail.
"""
import os
import shutil

import pytest

from fastnet import cli
from fastnet.experiment import Experiment, run_experiment
from _extras import needs

needs("matplotlib")

# Starting the browser took 5.6 s on a loaded two-core machine (the first test pays it).
pytestmark = pytest.mark.slow

REQUIRE = os.environ.get("FASTNET_REQUIRE_BROWSER", "0") not in ("", "0")
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
EVIL = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def _unavailable(reason):
    if REQUIRE:
        pytest.fail(reason + " (FASTNET_REQUIRE_BROWSER is set: install chromium, "
                    "chromium-driver and selenium)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium driven by chromedriver, logging the browser console."""
    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed")
    binary = next((b for b in map(shutil.which, BROWSERS) if b), None)
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        _unavailable(f"no Chromium/chromedriver on PATH (browser {binary}, driver {driver_path})")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1500,1200", "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:  # an explicit driver path: selenium's driver manager (network) is never asked
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    except WebDriverException as exc:
        _unavailable(f"Chromium did not start: {exc.msg}")
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def pages(proben1_root, tmp_path_factory):
    """A report (with timing) and a comparison written by the command line."""
    d = tmp_path_factory.mktemp("browser")
    files = []
    for name, variant in (("plus", "rprop+"), ("iminus", "irprop-")):
        path = d / f"{name}.jsonl"
        run_experiment(Experiment(problems=("cancer1", "building1"), networks=("linear", "pivot"),
                                  runs=4, seed=5, options={"max_epochs": 60, "variant": variant},
                                  root=str(proben1_root)), path)
        files.append(path)
    report, comparison = d / "report.html", d / "compare.html"
    assert cli.main(["report", str(files[0]), "-f", "html", "-o", str(report), "--timing"]) == 0
    assert cli.main(["compare", *map(str, files), "--labels", "plus", EVIL, "-f", "html",
                     "-o", str(comparison)]) == 0
    return report, comparison


def load(driver, path):
    """Open the page; return the browser console's entries of this load."""
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(path.as_uri())
    driver.execute_script("return document.readyState")
    return driver.get_log("browser")


def images(driver):
    return driver.execute_script("""
        return Array.from(document.images).map(function (im) {
            var r = im.getBoundingClientRect();
            return {complete: im.complete, w: im.naturalWidth, h: im.naturalHeight,
                    shownW: r.width, shownH: r.height, alt: im.alt,
                    scheme: im.currentSrc.split(':')[0],
                    visible: getComputedStyle(im).visibility === 'visible'
                             && getComputedStyle(im).display !== 'none'};
        });""")


def check_page(driver, path):
    """What every page must satisfy; returns the images."""
    log = load(driver, path)
    severe = [e for e in log if e.get("level") == "SEVERE"]
    assert not severe, severe
    assert driver.execute_script("return document.readyState") == "complete"
    imgs = images(driver)
    assert imgs, "no pictures"
    bad = [i for i in imgs if not (i["complete"] and i["w"] > 0 and i["h"] > 0)]
    assert not bad, f"{len(bad)} pictures not decoded: {bad[:3]}"
    assert all(i["scheme"] == "data" and i["visible"] and i["shownW"] > 100 and i["shownH"] > 80
               for i in imgs)
    # nothing was fetched from anywhere (the page is one file)
    fetched = driver.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; })"
        ".filter(function (n) { return n.indexOf('data:') !== 0; });")
    assert fetched == []
    # the style sheet applied (inline CSS allowed by the page's policy)
    assert driver.execute_script(
        "return getComputedStyle(document.querySelector('td.num')).textAlign") == "right"
    return imgs


def headings(driver, tag):
    return driver.execute_script(
        f"return Array.from(document.querySelectorAll('{tag}')).map(function (h) {{"
        " return h.textContent.trim(); });")


def table_rows(driver, table_id):
    return driver.execute_script(
        f"var t = document.getElementById('{table_id}'); if (!t) return null;"
        " return Array.from(t.querySelectorAll('tbody tr')).map(function (r) {"
        " return Array.from(r.cells).map(function (c) { return c.textContent.trim(); }); });")


def test_report_in_chromium(browser, pages):
    imgs = check_page(browser, pages[0])
    # 2 classification cells x 4 pictures, 2 approximation cells x 3, and per problem the
    # two networks side by side (box-whiskers and ECDF)
    assert len(imgs) == 14 + 2 * 2
    assert browser.title == "fastnet report: plus.jsonl"
    assert headings(browser, "h2") == ["Results", "Test error distribution", "Cost",
                                       "Distributions over the runs", "Set-up"]
    assert headings(browser, "h3") == ["cancer1: side by side", "building1: side by side",
                                       "cancer1, linear", "cancer1, pivot", "building1, linear",
                                       "building1, pivot"]
    results = table_rows(browser, "results-table")
    assert [r[:3] for r in results] == [["cancer1", "0+0 l", "4"], ["cancer1", "4+2 l", "4"],
                                        ["building1", "0+0 l", "4"], ["building1", "16+0 l", "4"]]
    assert len(table_rows(browser, "distribution-table")) == 4
    assert table_rows(browser, "timing-table")[-1][:3] == ["all", "all", "16"]
    setup = dict(r[:2] for r in table_rows(browser, "setup-table"))
    assert setup["multilayer rule"] == "tables" and "machine" in setup
    # the navigation leads to each cell's pictures
    assert browser.execute_script(
        "return Array.from(document.querySelectorAll('nav a')).every(function (a) {"
        " return document.getElementById(a.getAttribute('href').slice(1)) !== null; });")


def test_comparison_in_chromium(browser, pages):
    imgs = check_page(browser, pages[1])
    assert len(imgs) == 8  # 2 problems x (box, extended box, histograms, ECDF)
    # the malicious label is text: shown as written, never run
    assert browser.title == f"fastnet comparison: plus:linear vs plus:pivot vs {EVIL}:linear vs " \
        f"{EVIL}:pivot"
    assert browser.execute_script("return document.querySelectorAll('script').length") == 0
    assert browser.execute_script(
        "return document.querySelectorAll('img[src=\"x\"], img[onerror]').length") == 0
    labels = [r[1] for r in table_rows(browser, "algorithms-table")]
    assert labels == ["plus:linear", "plus:pivot", f"{EVIL}:linear", f"{EVIL}:pivot"]
    assert headings(browser, "h2")[:4] == ["Verdicts per problem", "Across problems",
                                           "Algorithms", "Effects and p-values per problem"]
    assert [r[0] for r in table_rows(browser, "ttests-table")] == ["cancer1"] * 6 + \
        ["building1"] * 6
    for tid in ("means-table", "over-table", "setup-table"):
        assert table_rows(browser, tid), tid
    assert "cancer1" in headings(browser, "h3") and "building1" in headings(browser, "h3")


def test_study_page_in_chromium(browser, tmp_path):
    # `fastnet study`'s page: no console error, every picture decoded, and each
    # algorithm's numbers are fastnet.stats.hamey_analysis of its written trials.
    import csv

    import numpy as np

    from fastnet.stats import hamey_analysis

    out = tmp_path / "study"
    T = 300
    assert cli.main(["study", "xor", "-a", "rprop+", "scg", "quickprop(epsilon=0.5)", "-k", "60",
                     "-T", str(T), "-o", str(out), "--quiet"]) == 0
    imgs = check_page(browser, out / "study.html")
    assert any("efficiency graphs" in i["alt"] for i in imgs)
    rows = {r[0]: r for r in table_rows(browser, "hamey-table")}
    assert set(rows) == {"rprop+", "scg", "quickprop(epsilon=0.5)"}
    with open(out / "trials.csv", newline="") as f:
        trials = list(csv.DictReader(f))
    for name, row in rows.items():
        mine = [t for t in trials if t["algorithm"] == name]
        assert len(mine) == 60
        times = np.array([float(t["time_to_success"]) if t["success"] == "1" else T
                          for t in mine])
        h = hamey_analysis(times, T)
        assert row[1] == f"{h.n_successes}/{h.n_trials}"
        assert float(row[2]) == pytest.approx(h.success_rate, rel=1e-3)
        if h.n_successes:
            assert float(row[3]) == pytest.approx(h.optimal_limit, rel=1e-3)
            assert float(row[4]) == pytest.approx(h.peak_efficiency, rel=1e-3)
            assert float(row[6]) == pytest.approx(h.fahlman_average, rel=1e-3)


# --------------------------------------------------------------------------- on a laptop screen

LAYOUT = r"""
var vw = document.documentElement.clientWidth, out = {vw: vw, problems: []};
if (document.documentElement.scrollWidth > vw + 1)
  out.problems.push('the page scrolls sideways');
document.querySelectorAll('.scroll').forEach(function (w) {
  var t = w.querySelector('table');
  if (w.scrollWidth <= w.clientWidth + 1) return;
  w.scrollLeft = w.scrollWidth;  // scrolled to its right end, the key column stays in view
  var key = t.querySelector('tbody tr th, tbody tr td');
  if (key.getBoundingClientRect().left < w.getBoundingClientRect().left - 1)
    out.problems.push(t.id + ': its first column scrolls out of view');
  w.scrollLeft = 0;
});
document.querySelectorAll('p, li, figcaption, td').forEach(function (e) {
  // text is left-aligned: every paragraph, and every cell that holds a sentence (starts
  // with a letter and has three words; "16 successes of 30 trials" is a number)
  if (e.tagName === 'TD' && !e.classList.contains('txt')
      && !/^[A-Za-z]/.test(e.textContent.trim()) ) return;
  if (e.tagName === 'TD' && !e.classList.contains('txt')
      && e.textContent.trim().split(/\s+/).filter(function (w) {
           return /^[A-Za-z]{2,}$/.test(w); }).length < 3) return;
  var a = getComputedStyle(e).textAlign;
  if (a !== 'left' && a !== 'start')
    out.problems.push(e.tagName + ' aligned ' + a + ': ' + e.textContent.slice(0, 40));
});
document.querySelectorAll('nav li').forEach(function (li) {
  if (li.getClientRects().length !== 1) out.problems.push('a navigation entry is split');
  var next = li.nextElementSibling;
  if (!next) return;
  var a = li.getBoundingClientRect(), b = next.getBoundingClientRect();
  if (a.left === b.left && a.bottom > b.top + 1)
    out.problems.push('navigation entries overlap');
});
return out;
"""


def fits(driver, table_id):
    """Whether the table is whole on the screen (no sideways scrolling)."""
    return driver.execute_script(
        f"var t = document.getElementById('{table_id}'), w = t.parentElement;"
        " return w.scrollWidth <= w.clientWidth + 1"
        " && t.getBoundingClientRect().right <= document.documentElement.clientWidth;")


@pytest.mark.parametrize("width", [1000, 1400])
def test_pages_work_on_a_laptop_screen(browser, pages, tmp_path, width):
    out = tmp_path / "study"
    assert cli.main(["study", "xor", "-a", "rprop+", "backprop(learning_rate=2.0)",
                     "quickprop(epsilon=0.5)", "lm", "-k", "20", "-T", "200", "-o", str(out),
                     "--quiet"]) == 0
    browser.set_window_size(width, 900)
    try:
        for page in (pages[0], pages[1], out / "study.html"):
            load(browser, page)
            found = browser.execute_script(LAYOUT)
            assert found["problems"] == [], (page.name, found)
        load(browser, pages[1])  # the comparison: verdicts first, their table whole
        assert headings(browser, "h2")[0] == "Verdicts per problem"
        assert fits(browser, "ttests-table") and fits(browser, "over-table")
        assert browser.execute_script(
            "return document.getElementById('setup-table').getBoundingClientRect().top"
            " > document.images[document.images.length - 1].getBoundingClientRect().top")
        load(browser, out / "study.html")  # the study: its tables whole (they wrap)
        for table in ("hamey-table", "cost-table", "logrank-table", "lawrence-table"):
            assert fits(browser, table), table
    finally:
        browser.set_window_size(1500, 1200)
