"""The workbench in a real browser: JupyterLab on loopback + Debian's Chromium via playwright.

Runs notebooks/workbench.ipynb (a copy, so outputs never land in the repository) cell by cell
and checks, with screenshots in tests/_artifacts/:

- the widget appears within 3 s of its cell (loading and solving run in the background);
- on the phone profile, moving ε solves again and moving it back redraws from the plan cache;
  K is a live control of the compared (greedy) plan;
- the H200 streams profile draws a Gantt row per CUDA stream, Recommend times the candidates
  on the replay, and Run replays the recommended plan;
- one workbench goes through squeezenet (profiled here, run for real, Perfetto trace),
  googlenet (Load model, then its profile measured on this kind of machine) and NASNet-large
  (its phone profile): after each switch and each ε/NT/K move every Gantt is redrawn with
  the new plan, its makespan is the one in its info line, and Run executes the plan shown;
- Cancel stops a profile (a workbench profiling with the cache off);
- the browser logs no error about setting a widget's state, and no cell shows HiGHS's banner.

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

from tests import browser_page as bp

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
    "models": 'wb_models = Workbench(model="squeezenet")\nwb_models',
}
# the workbenches on the page, in cell order
PHONE, GPU, CANCEL, MODELS = range(4)


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


def _first_view(page) -> None:
    """The cells before the workbench's, then the workbench's, timed until it is on screen."""
    page.get_by_text("| Idle").first.wait_for(timeout=90_000)
    cell = bp.index_of(page, "wb = Workbench(")
    for i in range(cell):
        if "jp-CodeCell" in (bp.cells(page).nth(i).get_attribute("class") or ""):
            bp.run_cell(page, i)
            bp.wait_done(page, i)
    bp.run_cell(page, cell)
    page.wait_for_selector(".hetlab-workbench", timeout=60_000)
    page.screenshot(path=str(ART / "workbench_first_view.png"))
    bp.wait_done(page, cell, 10_000)  # the cell itself returns at once


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


def _phone(page) -> None:
    """HOPE's P40 profile: ε to 0.3 (a solve), back to 0.2 (from the plan cache, no solve);
    K to 1 changes the compared plan."""
    page.wait_for_function(f"({bp.DRAWN})({PHONE}) >= 4", timeout=180_000)
    bp.wait_gantt(page, PHONE, "ilp (ε=0.2")
    page.screenshot(path=str(ART / "workbench.png"))
    bp.move(page, PHONE, "ε", "0.3", bars_change=True)
    page.evaluate(WATCH_JS)
    slider = bp.workbench(page, PHONE).locator(".widget-hslider", has_text="ε (epsilon)").first
    bp.set_readout(page, slider, "0.2", enter=False)
    page.keyboard.press("Enter")
    bp.wait_gantt(page, PHONE, "ilp", "ε=0.2", timeout=10_000)
    page.wait_for_function("window.__marks.status !== undefined", timeout=10_000)
    bp.move(page, PHONE, "K", "1", bars_change=True)


def _streams(page) -> None:
    """The H200 googlenet streams profile: a Gantt row per stream, Recommend, and a replay
    of the ILP's streams plan with its rows."""
    cell = bp.index_of(page, "wb_gpu = Workbench(")
    bp.run_cell(page, cell)
    page.wait_for_function(f"({bp.DRAWN})({GPU}) >= 4", timeout=180_000)
    ilp = bp.wait_gantt(page, GPU, "ilp (")
    streams = {"cuda0", "cuda0.q1", "cuda0.q2", "cuda0.q3"}
    assert len(streams & set(ilp["rows"])) >= 2, ilp["rows"]  # a row per stream used
    info = bp.line(page, GPU, "ilp: makespan")
    bp.title_agrees(ilp, info)
    bp.click(page, GPU, "Recommend")
    rec = bp.wait_gantt(page, GPU, "recommended", timeout=240_000)
    assert set(rec["rows"]) & streams and "makespan" in rec["title"], rec
    bp.run_shown_plan(page, GPU, "ILP", "replay", info)
    run = bp.wait_gantt(page, GPU, "replay: ILP plan")
    assert len(streams & set(run["rows"])) >= 2 and len(run["base"]) >= 196, run["rows"]
    assert bp.ms(run["title"], "predicted") == bp.ms(ilp["title"], "makespan")
    bp.workbench(page, GPU).screenshot(path=str(ART / "workbench_streams_replayed.png"))


def _cancel_profile(page) -> None:
    """A workbench profiles with the cache off; Cancel stops it mid-way."""
    cell = bp.index_of(page, "wb_cancel = Workbench(")
    bp.run_cell(page, cell)
    page.wait_for_function(
        f"document.querySelectorAll('.hetlab-workbench').length > {CANCEL}", timeout=30_000
    )
    box = bp.workbench(page, CANCEL)
    box.locator(".widget-html", has_text=re.compile(r"\d+/\d+ ·")).first.wait_for(
        timeout=120_000
    )  # the profiler's own message is on screen
    cancel = box.locator("button.jupyter-button", has_text="Cancel").first
    cancel.scroll_into_view_if_needed()
    cancel.click()
    box.get_by_text("profile cancelled").first.wait_for(timeout=60_000)
    box.screenshot(path=str(ART / "workbench_cancelled.png"))
    assert cancel.is_disabled()


def _squeezenet(page, folder: Path) -> None:
    """Profiled on this machine; ε, NT, K moved; the ILP plan run for real; its trace."""
    cell = bp.index_of(page, "wb_models = Workbench(")
    bp.run_cell(page, cell)
    box = bp.workbench(page, MODELS)
    bp.click(page, MODELS, "Profile", timeout=60_000)  # enabled once the model has loaded
    # minutes with an empty profile cache on a loaded 2-core machine
    bp.wait_gantt(page, MODELS, "ilp (", timeout=600_000)
    bp.wait_gantt(page, MODELS, "greedy")
    for name, value in (("ε", "0.5"), ("NT", "8"), ("K", "1")):
        bp.move(page, MODELS, name, value, bars_change=False)  # its plans hardly differ
    bp.run_shown_plan(page, MODELS, "ILP", "this machine", bp.line(page, MODELS, "ilp: makespan"))
    assert bp.gantt(page, MODELS, "measured: ILP plan")["base"]
    folder_box = box.locator(".widget-text", has_text="folder").first.locator("input")
    folder_box.fill(str(folder))
    folder_box.press("Enter")
    bp.click(page, MODELS, "Perfetto trace")
    page.wait_for_function("document.body.innerText.includes('ui.perfetto.dev')", timeout=30_000)
    traces = list(folder.glob("*.trace.json"))
    assert traces and "traceEvents" in traces[0].read_text()[:2000]


def _switched(page, profile_label: str, ops: int, moves, name: str) -> None:
    """After a switch to a profile of ``ops`` ops: every Gantt of it, then the moves, then a
    replay of the compared plan on screen."""
    box = bp.workbench(page, MODELS)
    select = box.locator(".widget-dropdown", has_text="or open").first.locator("select")
    select.scroll_into_view_if_needed()
    select.select_option(label=profile_label)
    page.wait_for_function(
        "(a) => { const g = (" + bp.GANTT_JS + ")([a[0], 'ilp (']);"
        " return g && g.base.length === a[1]; }",
        arg=[MODELS, ops],
        timeout=240_000,
    )
    assert not bp.gantt(page, MODELS, "measured"), "a run of the model before is still shown"
    box.screenshot(path=str(ART / f"workbench_{name}.png"))
    for control, value in moves:
        bp.move(page, MODELS, control, value, bars_change=True)
    greedy = bp.line(page, MODELS, "greedy: makespan")
    bp.run_shown_plan(page, MODELS, "greedy", "replay", greedy)
    assert len(bp.gantt(page, MODELS, "replay: greedy plan")["base"]) == ops


def _googlenet(page) -> None:
    """Load model: the DAG of googlenet and nothing of squeezenet; then its profile."""
    box = bp.workbench(page, MODELS)
    picker = box.get_by_placeholder("zoo name or path/to/model.onnx")
    picker.fill("googlenet")
    bp.click(page, MODELS, "Load model")
    page.wait_for_function(
        "(i) => (" + bp.LINES_JS + ")(i).some(t => t.startsWith('googlenet: 196 ops'))",
        arg=MODELS,
        timeout=120_000,
    )
    page.wait_for_function(f"({bp.DRAWN})({MODELS}) === 1", timeout=60_000)  # the DAG alone
    lines = page.evaluate(bp.LINES_JS, MODELS)
    assert not any("squeezenet" in t or "profiled" in t for t in lines), lines
    assert not any(t.startswith(("ilp: makespan", "greedy: makespan")) for t in lines), lines
    box.screenshot(path=str(ART / "workbench_switched_to_googlenet.png"))
    moves = (("ε", "0.2"), ("NT", "12"), ("K", "2"))
    _switched(page, "xeon-2core-pocl · googlenet", 196, moves, "googlenet")


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
                _phone(page)
                _streams(page)
                last = bp.index_of(page, 'print(f"{name}')
                bp.run_cell(page, last)
                bp.wait_done(page, last)
                _cancel_profile(page)
                _squeezenet(page, tmp_path / "files")
                _googlenet(page)
                nas = (("ε", "0.05"), ("NT", "8"), ("K", "1"))
                _switched(page, "phone (HOPE) · nasnet-large-huawei_p40", 1049, nas, "nasnet")
                text = page.locator(".jp-Notebook").inner_text()
                assert "Traceback" not in text and "HiGHS" not in text, text[-1500:]
                assert "makespan" in page.locator(".jp-Cell").nth(last).inner_text()
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
