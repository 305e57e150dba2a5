"""The reports in a real browser: headless Chromium (Debian's ``chromium`` and ``chromium-driver``
packages) driven by selenium opens each generated report.html and fails on any console error,
any image that does not load, or a page without its headline table before the figures.  A
screenshot of the first screen is saved beside each report (``report_screenshot.png``).

The reports are generated here with small budgets: demonstration 1 (seven depths), demonstration
2 (the next depth), one synthetic well run, and a folder of two well runs (one page, two sections).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from glassformer.report import write_report

SCREEN = (1200, 1400)


def _browser_paths():
    chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                    None)
    return chromium, shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium with its console log kept; skipped only when none is installed."""
    chromium, driver_path = _browser_paths()
    if chromium is None or driver_path is None:
        pytest.skip("no Chromium browser and chromedriver on PATH (Debian: apt-get install -y chromium "
                    "chromium-driver; .ci/run installs them)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed: pip install -e '.[test]'")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={SCREEN[0]},{SCREEN[1]}", "--allow-file-access-from-files"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=opts)
    yield driver
    driver.quit()


def page_problems(driver, html_path) -> list:
    """Open ``html_path`` and list what is wrong: console errors, images not loaded, no headline table
    (``<table id="headline">``) or one that does not come before the first figure."""
    driver.get(html_path.resolve().as_uri())
    problems = [f"console {e['level']}: {e['message']}" for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    broken = driver.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
        ".map(i => i.alt || i.src.slice(0, 40));")
    problems += [f"image not loaded: {b}" for b in broken]
    tag = driver.execute_script("var t = document.getElementById('headline'); return t ? t.tagName : null;")
    if tag != "TABLE":
        problems.append("no headline table (<table id=\"headline\">)")
    elif driver.execute_script("var f = document.querySelector('figure'); return f !== null && "
                               "!(document.getElementById('headline').compareDocumentPosition(f) & "
                               "Node.DOCUMENT_POSITION_FOLLOWING);"):
        problems.append("the headline table does not come before the figures")
    return problems


def _screenshot(driver, run_dir):
    """Save the first screen as ``run_dir/report_screenshot.png``; return it as an (h, w, 3) array."""
    from PIL import Image

    path = run_dir / "report_screenshot.png"
    driver.save_screenshot(str(path))
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run folders of the demos with small budgets, each ending with its report.html."""
    from glassformer.demos import neighbor, porosity, synthetic_wells

    root = tmp_path_factory.mktemp("browser")
    porosity.run(root / "porosity", epochs=30, lstm_epochs=10)
    neighbor.run(root / "neighbor", epochs=1, lstm_epochs=1)
    synthetic_wells.run(root / "synthetic", epochs=1, n_wells=10, seeds=(42,), lstm=False)
    _two_well_runs(root / "wells")
    return root


def _two_well_runs(out):
    """A folder of two runs, laid out as the real-wells demo lays out its experiments."""
    from glassformer.data.synthetic import synthetic_wells
    from glassformer.models import SequenceRegressor
    from glassformer.runs import write_json
    from glassformer.wells import WellModel, run_well_experiment

    wells = synthetic_wells(n_wells=4, seed=13)

    def pipe():
        return WellModel(["PHI", "VSH"], "PERM", window=16, model=SequenceRegressor(epochs=1))

    g = wells[0]
    cut = float(g.depth[len(g.depth) // 2])
    step = float(g.depth[1] - g.depth[0])
    tables = {}
    for name, train, test, extra in (
            ("depth-split", [g.interval(float(g.depth[0]), cut)], [g.interval(cut + step / 2, float(g.depth[-1]))],
             {"boundary": cut}),
            ("across-wells", wells[1:3], wells[3:], {})):
        m = run_well_experiment(out / name, train, test, pipe(), title=f"Two wells: {name}",
                                config={"demo": "synthetic-wells"}, **extra)
        tables[name] = m["comparison"]["table"]
    write_json(out / "metrics.json", {"title": "Two synthetic well runs", **tables})
    write_report(out)


@pytest.mark.parametrize("name", ["porosity", "neighbor", "synthetic", "wells"])
def test_report_opens_cleanly_in_chromium(browser, runs, name):
    run_dir = runs / name
    assert page_problems(browser, run_dir / "report.html") == []
    n_images = browser.execute_script("return document.images.length;")
    pngs = list(run_dir.glob("figures/*.png")) + list(run_dir.glob("*/figures/*.png"))   # a folder of runs: theirs
    assert n_images == len(pngs) > 0             # every figure embedded, and every one loaded (above)
    shot = _screenshot(browser, run_dir)
    assert shot.shape[1] == SCREEN[0] and shot.shape[0] > 600
    assert shot.std() > 10                       # a rendered page, not a blank screen


def test_attention_cells_show_query_key_and_weight_on_hover(browser, runs):
    """Demonstration 1's attention map: 14 x 14 cells, each with its depths and weight as hover text."""
    import json

    data = json.loads((runs / "porosity" / "figures" / "attention.json").read_text())
    A = np.asarray(data["matrix"])
    assert A.shape == (14, 14) and data["query_positions"] == list(range(1, 15)) and data["position_unit"] == "m"
    browser.get((runs / "porosity" / "report.html").resolve().as_uri())
    tips = browser.execute_script(
        "return Array.from(document.querySelectorAll('#fig-attention-svg rect title')).map(t => t.textContent);")
    assert len(tips) == 14 * 14
    assert tips[2 * 14 + 5] == f"query depth 3 m, key depth 6 m, weight {A[2, 5]:.4g}"


def test_a_folder_of_runs_is_one_page_with_a_section_per_run(browser, runs):
    browser.get((runs / "wells" / "report.html").resolve().as_uri())
    sections = browser.execute_script("return Array.from(document.querySelectorAll('section.run')).map(s => s.id);")
    assert sections == ["run-depth-split", "run-across-wells"]          # the order the runs were made
    figures = browser.execute_script("return document.querySelectorAll('section.run figure').length;")
    assert figures == sum(len(list((runs / "wells" / s / "figures").glob("*.png")))
                          for s in ("depth-split", "across-wells"))
    rows = browser.execute_script("return document.querySelectorAll('#headline tr.model').length;")
    assert rows == 2                                                     # one transformer row per run


def test_the_checker_catches_a_broken_page(browser, tmp_path):
    """page_problems itself: a console error, a broken image and a missing headline are all reported."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><img alt=\"broken\" src=\"data:image/png;base64,AAAA\">"
                   "<script>console.error('boom');</script><figure></figure></body></html>")
    problems = page_problems(browser, bad)
    assert any("boom" in p for p in problems)
    assert "image not loaded: broken" in problems
    assert "no headline table (<table id=\"headline\">)" in problems
    late = tmp_path / "late.html"
    late.write_text("<!DOCTYPE html><html><body><figure></figure><table id=\"headline\"></table></body></html>")
    assert page_problems(browser, late) == ["the headline table does not come before the figures"]
