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


# workbench ``i``'s first plot whose title starts with ``prefix``: its title as shown, its
# first trace's data (bar starts, rows) and the rows its y axis shows
GANTT_JS = """([i, prefix]) => {
  const wb = document.querySelectorAll('.hetlab-workbench')[i];
  if (!wb) return null;
  for (const p of wb.querySelectorAll('.js-plotly-plot')) {
    const t = p.querySelector('.gtitle');
    if (!t || !t.textContent.startsWith(prefix) || !Array.isArray(p.data) || !p.data.length)
      continue;
    const d = p.data[0];
    return {title: t.textContent, base: Array.from(d.base || []), y: Array.from(d.y || []),
            x: Array.from(d.x || []),
            rows: [...p.querySelectorAll('.ytick text')].map(e => e.textContent)};
  }
  return null;
}"""
# the text lines (HTML widgets) of workbench ``i``
LINES_JS = """(i) => [...(document.querySelectorAll('.hetlab-workbench')[i] || document.createElement('p'))
    .querySelectorAll('.widget-html')].map(e => e.innerText.trim()).filter(t => t)"""
DRAWN = """(i) => [...(document.querySelectorAll('.hetlab-workbench')[i] || document.createElement('p'))
    .querySelectorAll('.js-plotly-plot')].filter(p => Array.isArray(p.data) && p.data.length).length"""


# cell ``i`` runs or ran: its prompt shows [*] or [N]
STARTED = """(i) => { const c = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
    const p = c && c.querySelector('.jp-InputPrompt');
    return p && /\\[(\\*|\\d+)\\]/.test(p.textContent); }"""


def _cells(page):
    return page.locator(".jp-Notebook .jp-Cell")


def _run_cell(page, i: int) -> None:
    """Select cell ``i`` and run it (Shift+Enter), without waiting for it to finish; again
    if the keys did not reach the notebook (focus kept by a widget)."""
    from playwright.sync_api import TimeoutError as Timeout

    cell = _cells(page).nth(i)
    for _ in range(3):
        cell.scroll_into_view_if_needed()
        cell.locator(".jp-InputArea").first.click()
        page.keyboard.press("Escape")  # command mode: Shift+Enter runs the selected cell
        page.keyboard.press("Shift+Enter")
        try:
            page.wait_for_function(STARTED, arg=i, timeout=5_000)
            return
        except Timeout:
            continue
    raise AssertionError(f"cell {i} did not start")


def _wait_done(page, i: int, timeout: float = 120_000) -> None:
    page.wait_for_function(
        """(i) => { const c = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
                    const p = c && c.querySelector('.jp-InputPrompt');
                    return p && /\\[\\d+\\]/.test(p.textContent); }""",
        arg=i,
        timeout=timeout,
    )


def _index_of(page, cell_id_text: str) -> int:
    texts = _cells(page).all_inner_texts()
    return next(i for i, t in enumerate(texts) if cell_id_text in t)


def _box(page, i: int):
    return page.locator(".hetlab-workbench").nth(i)


def _gantt(page, i: int, prefix: str) -> dict | None:
    return page.evaluate(GANTT_JS, [i, prefix])


def _wait_gantt(page, i: int, prefix: str, has: str = "", timeout: float = 120_000) -> dict:
    """Workbench ``i``'s Gantt titled ``prefix``..., once its title contains ``has``."""
    page.wait_for_function(
        f"(a) => {{ const g = ({GANTT_JS})([a[0], a[1]]); return g && g.title.includes(a[2]); }}",
        arg=[i, prefix, has],
        timeout=timeout,
    )
    return _gantt(page, i, prefix)


def _line(page, i: int, start: str) -> str | None:
    return next((t for t in page.evaluate(LINES_JS, i) if t.startswith(start)), None)


def _ms(text: str, after: str) -> str:
    m = re.search(re.escape(after) + r"\s*([\d.]+)", text)
    assert m, (after, text)
    return m.group(1)


def _title_agrees(gantt: dict, info: str) -> None:
    """The Gantt's makespan (as its title rounds it) is the one in its info line."""
    shown, exact = _ms(gantt["title"], "makespan"), float(_ms(info, "makespan"))
    decimals = len(shown.partition(".")[2])
    assert abs(float(shown) - exact) <= 0.5 * 10**-decimals + 1e-9, (gantt["title"], info)


def _set_readout(page, slider, value: str, enter: bool = True) -> None:
    """Type ``value`` into a slider's readout and press Enter (one change, on release)."""
    slider.scroll_into_view_if_needed()
    slider.locator(".widget-readout").click()
    page.keyboard.press("Control+A")
    page.keyboard.type(value)
    if enter:
        page.keyboard.press("Enter")


def _set_control(page, i: int, name: str, value: str) -> None:
    """ε and K are sliders (K leaves "auto" first), NT a number box."""
    box = _box(page, i)
    if name == "NT":
        field = box.locator(".widget-text", has_text="NT (nt").first.locator("input")
        field.scroll_into_view_if_needed()
        field.fill(value)
        field.press("Enter")
        return
    slider = box.locator(".widget-hslider", has_text={"ε": "ε (epsilon)", "K": "K (k)"}[name])
    slider = slider.first
    if name == "K":
        auto = slider.locator("xpath=..").locator("input[type=checkbox]").first
        if auto.is_checked():
            auto.uncheck()
    _set_readout(page, slider, value)


def _move(page, i: int, name: str, value: str, bars_change: bool) -> None:
    """Move ε, NT or K: its Gantt is redrawn for the new value, with the new plan's bars
    where that plan differs, and its makespan is its info line's."""
    prefix, info = ("greedy", "greedy:") if name == "K" else ("ilp", "ilp:")
    before = _gantt(page, i, prefix)
    _set_control(page, i, name, value)
    sym = f"{name}={value}"
    after = _wait_gantt(page, i, prefix, sym, timeout=180_000)
    if bars_change:
        assert (after["base"], after["x"], after["y"]) != (before["base"], before["x"], before["y"])
    page.wait_for_function(
        "(i) => !(" + LINES_JS + ")(i).some(t => t.includes('solving'))", arg=i, timeout=180_000
    )
    _title_agrees(after, _line(page, i, info + " makespan"))


def _click(page, i: int, text: str) -> None:
    button = _box(page, i).locator("button", has_text=re.compile(rf"^\W*{text}\W*$")).first
    button.scroll_into_view_if_needed()
    assert button.is_enabled(), (text, page.evaluate(LINES_JS, i))
    button.click()


def _run_shown_plan(page, i: int, choice: str, where: str, info: str) -> str:
    """Run (or replay) the plan chosen; the run's prediction is the makespan on screen."""
    _click(page, i, choice)
    _click(page, i, where)
    _click(page, i, "Run")
    page.wait_for_function(
        "(a) => (" + LINES_JS + ")(a).some(t => t.includes('vs predicted'))",
        arg=i,
        timeout=180_000,
    )
    status = next(t for t in page.evaluate(LINES_JS, i) if "vs predicted" in t)
    assert _ms(status, "vs predicted") == _ms(info, "makespan"), (status, info)
    return status


def _first_view(page) -> None:
    """The cells before the workbench's, then the workbench's, timed until it is on screen."""
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
    page.wait_for_function(f"({DRAWN})({PHONE}) >= 4", timeout=180_000)
    _wait_gantt(page, PHONE, "ilp (ε=0.2")
    page.screenshot(path=str(ART / "workbench.png"))
    _move(page, PHONE, "ε", "0.3", bars_change=True)
    page.evaluate(WATCH_JS)
    slider = _box(page, PHONE).locator(".widget-hslider", has_text="ε (epsilon)").first
    _set_readout(page, slider, "0.2", enter=False)
    page.keyboard.press("Enter")
    _wait_gantt(page, PHONE, "ilp", "ε=0.2", timeout=10_000)
    page.wait_for_function("window.__marks.status !== undefined", timeout=10_000)
    _move(page, PHONE, "K", "1", bars_change=True)


def _streams(page) -> None:
    """The H200 googlenet streams profile: a Gantt row per stream, Recommend, and a replay
    of the ILP's streams plan with its rows."""
    cell = _index_of(page, "wb_gpu = Workbench(")
    _run_cell(page, cell)
    page.wait_for_function(f"({DRAWN})({GPU}) >= 4", timeout=180_000)
    ilp = _wait_gantt(page, GPU, "ilp (")
    streams = {"cuda0", "cuda0.q1", "cuda0.q2", "cuda0.q3"}
    assert len(streams & set(ilp["rows"])) >= 2, ilp["rows"]  # a row per stream used
    info = _line(page, GPU, "ilp: makespan")
    _title_agrees(ilp, info)
    _click(page, GPU, "Recommend")
    rec = _wait_gantt(page, GPU, "recommended", timeout=240_000)
    assert set(rec["rows"]) & streams and "makespan" in rec["title"], rec
    _run_shown_plan(page, GPU, "ILP", "replay", info)
    run = _wait_gantt(page, GPU, "replay: ILP plan")
    assert len(streams & set(run["rows"])) >= 2 and len(run["base"]) >= 196, run["rows"]
    assert _ms(run["title"], "predicted") == _ms(ilp["title"], "makespan")
    _box(page, GPU).screenshot(path=str(ART / "workbench_streams_replayed.png"))


def _cancel_profile(page) -> None:
    """A workbench profiles with the cache off; Cancel stops it mid-way."""
    cell = _index_of(page, "wb_cancel = Workbench(")
    _run_cell(page, cell)
    page.wait_for_function(
        f"document.querySelectorAll('.hetlab-workbench').length > {CANCEL}", timeout=30_000
    )
    box = _box(page, CANCEL)
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
    cell = _index_of(page, "wb_models = Workbench(")
    _run_cell(page, cell)
    box = _box(page, MODELS)
    box.locator("button.jupyter-button:not([disabled])", has_text="Profile").first.wait_for(
        timeout=60_000
    )  # enabled once the model has loaded
    _click(page, MODELS, "Profile")
    # minutes with an empty profile cache on a loaded 2-core machine
    _wait_gantt(page, MODELS, "ilp (", timeout=600_000)
    _wait_gantt(page, MODELS, "greedy")
    for name, value in (("ε", "0.5"), ("NT", "8"), ("K", "1")):
        _move(page, MODELS, name, value, bars_change=False)  # its plans hardly differ
    _run_shown_plan(page, MODELS, "ILP", "this machine", _line(page, MODELS, "ilp: makespan"))
    assert _gantt(page, MODELS, "measured: ILP plan")["base"]
    folder_box = box.locator(".widget-text", has_text="folder").first.locator("input")
    folder_box.fill(str(folder))
    folder_box.press("Enter")
    _click(page, MODELS, "Perfetto trace")
    page.wait_for_function("document.body.innerText.includes('ui.perfetto.dev')", timeout=30_000)
    traces = list(folder.glob("*.trace.json"))
    assert traces and "traceEvents" in traces[0].read_text()[:2000]


def _switched(page, profile_label: str, ops: int, moves, name: str) -> None:
    """After a switch to a profile of ``ops`` ops: every Gantt of it, then the moves, then a
    replay of the compared plan on screen."""
    box = _box(page, MODELS)
    select = box.locator(".widget-dropdown", has_text="or open").first.locator("select")
    select.scroll_into_view_if_needed()
    select.select_option(label=profile_label)
    page.wait_for_function(
        "(a) => { const g = (" + GANTT_JS + ")([a[0], 'ilp (']);"
        " return g && g.base.length === a[1]; }",
        arg=[MODELS, ops],
        timeout=240_000,
    )
    assert not _gantt(page, MODELS, "measured"), "a run of the model before is still shown"
    box.screenshot(path=str(ART / f"workbench_{name}.png"))
    for control, value in moves:
        _move(page, MODELS, control, value, bars_change=True)
    greedy = _line(page, MODELS, "greedy: makespan")
    _run_shown_plan(page, MODELS, "greedy", "replay", greedy)
    assert len(_gantt(page, MODELS, "replay: greedy plan")["base"]) == ops


def _googlenet(page) -> None:
    """Load model: the DAG of googlenet and nothing of squeezenet; then its profile."""
    box = _box(page, MODELS)
    picker = box.get_by_placeholder("zoo name or path/to/model.onnx")
    picker.fill("googlenet")
    _click(page, MODELS, "Load model")
    page.wait_for_function(
        "(i) => (" + LINES_JS + ")(i).some(t => t.startsWith('googlenet: 196 ops'))",
        arg=MODELS,
        timeout=120_000,
    )
    page.wait_for_function(f"({DRAWN})({MODELS}) === 1", timeout=60_000)  # the DAG alone
    lines = page.evaluate(LINES_JS, MODELS)
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
                last = _index_of(page, 'print(f"{name}')
                _run_cell(page, last)
                _wait_done(page, last)
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
