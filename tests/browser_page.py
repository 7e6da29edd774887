"""Driving the workbench in JupyterLab from playwright (``tests/test_browser.py``): cells,
the controls of workbench ``i`` (the i-th on the page), and what its figures and lines show,
read from the page as a user sees it."""

from __future__ import annotations

import re

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
# what one plot shows: its title, its traces and their points (plotly's ``p.data``), and the
# marks drawn for them (SVG trace groups and heatmap images, or a WebGL canvas)
PLOT_JS = """(p) => {
  const data = Array.isArray(p.data) ? p.data : [];
  const len = v => (v && v.length) || 0;
  return {title: (p.querySelector('.gtitle') || {}).textContent || '', traces: data.length,
          // plotly's own figures send base64 arrays, decoded in _fullData only
          points: (p._fullData || data).reduce(
            (n, t) => n + Math.max(len(t.x), len(t.y), len(t.z)), 0),
          marks: p.querySelectorAll('.trace, .hm, .gl-container canvas').length};
}"""
# the plots of workbench ``i``, each as PLOT_JS reads it
FIGS_JS = (
    "(i) => [...(document.querySelectorAll('.hetlab-workbench')[i] || document.createElement('p'))"
    ".querySelectorAll('.js-plotly-plot')].map(" + PLOT_JS + ")"
)
# how many plots of workbench ``i`` have traces with points, drawn
DRAWN = "(i) => (" + FIGS_JS + ")(i).filter(f => f.traces && f.points && f.marks).length"


# cell ``i`` runs or ran: its prompt shows [*] or [N]
STARTED = """(i) => { const c = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
    const p = c && c.querySelector('.jp-InputPrompt');
    return p && /\\[(\\*|\\d+)\\]/.test(p.textContent); }"""


def cells(page):
    return page.locator(".jp-Notebook .jp-Cell")


def run_cell(page, i: int) -> None:
    """Select cell ``i`` and run it (Shift+Enter), without waiting for it to finish; again
    if the keys did not reach the notebook (focus kept by a widget)."""
    from playwright.sync_api import TimeoutError as Timeout

    cell = cells(page).nth(i)
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


def wait_done(page, i: int, timeout: float = 120_000) -> None:
    page.wait_for_function(
        """(i) => { const c = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
                    const p = c && c.querySelector('.jp-InputPrompt');
                    return p && /\\[\\d+\\]/.test(p.textContent); }""",
        arg=i,
        timeout=timeout,
    )


def index_of(page, cell_id_text: str) -> int:
    texts = cells(page).all_text_contents()  # off-screen cells too (windowed notebook)
    return next(i for i, t in enumerate(texts) if cell_id_text in t)


def workbench(page, i: int):
    return page.locator(".hetlab-workbench").nth(i)


def gantt(page, i: int, prefix: str) -> dict | None:
    return page.evaluate(GANTT_JS, [i, prefix])


def wait_gantt(page, i: int, prefix: str, has: str = "", timeout: float = 120_000) -> dict:
    """Workbench ``i``'s Gantt titled ``prefix``..., once its title contains ``has``."""
    page.wait_for_function(
        f"(a) => {{ const g = ({GANTT_JS})([a[0], a[1]]); return g && g.title.includes(a[2]); }}",
        arg=[i, prefix, has],
        timeout=timeout,
    )
    return gantt(page, i, prefix)


def line(page, i: int, start: str) -> str | None:
    return next((t for t in page.evaluate(LINES_JS, i) if t.startswith(start)), None)


def ms(text: str, after: str) -> str:
    m = re.search(re.escape(after) + r"\s*([\d.]+)", text)
    assert m, (after, text)
    return m.group(1)


def title_agrees(gantt: dict, info: str) -> None:
    """The Gantt's makespan (as its title rounds it) is the one in its info line."""
    shown, exact = ms(gantt["title"], "makespan"), float(ms(info, "makespan"))
    decimals = len(shown.partition(".")[2])
    assert abs(float(shown) - exact) <= 0.5 * 10**-decimals + 1e-9, (gantt["title"], info)


def set_readout(page, slider, value: str, enter: bool = True) -> None:
    """Type ``value`` into a slider's readout and press Enter (one change, on release)."""
    slider.scroll_into_view_if_needed()
    slider.locator(".widget-readout").click()
    page.keyboard.press("Control+A")
    page.keyboard.type(value)
    if enter:
        page.keyboard.press("Enter")


def set_control(page, i: int, name: str, value: str) -> None:
    """ε and K are sliders (K leaves "auto" first), NT a number box."""
    box = workbench(page, i)
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
    set_readout(page, slider, value)


def move(page, i: int, name: str, value: str, bars_change: bool) -> None:
    """Move ε, NT or K: its Gantt is redrawn for the new value, with the new plan's bars
    where that plan differs, and its makespan is its info line's."""
    prefix, info = ("greedy", "greedy:") if name == "K" else ("ilp", "ilp:")
    before = gantt(page, i, prefix)
    set_control(page, i, name, value)
    sym = f"{name}={value}"
    after = wait_gantt(page, i, prefix, sym, timeout=180_000)
    if bars_change:
        assert (after["base"], after["x"], after["y"]) != (before["base"], before["x"], before["y"])
    page.wait_for_function(
        "(i) => !(" + LINES_JS + ")(i).some(t => t.includes('solving'))", arg=i, timeout=180_000
    )
    title_agrees(after, line(page, i, info + " makespan"))


def button(page, i: int, text: str):
    """Workbench ``i``'s button labelled ``text`` exactly."""
    return workbench(page, i).locator("button", has_text=re.compile(rf"^\W*{text}\W*$")).first


def click(page, i: int, text: str, timeout: float = 10_000) -> None:
    """Click a button once it is enabled."""
    from playwright.sync_api import expect

    b = button(page, i, text)
    b.scroll_into_view_if_needed()
    expect(b).to_be_enabled(timeout=timeout)
    b.click()


def run_shown_plan(page, i: int, choice: str, where: str, info: str) -> str:
    """Run (or replay) the plan chosen; the run's prediction is the makespan on screen."""
    click(page, i, choice)
    click(page, i, where)
    click(page, i, "Run")
    page.wait_for_function(
        "(a) => (" + LINES_JS + ")(a).some(t => t.includes('vs predicted'))",
        arg=i,
        timeout=180_000,
    )
    status = next(t for t in page.evaluate(LINES_JS, i) if "vs predicted" in t)
    # the status compares with the run's one prediction; where that is not the plan's §3
    # makespan, the status names the makespan too
    shown = "§3 makespan" if "§3 makespan" in status else "vs predicted"
    assert ms(status, shown) == ms(info, "makespan"), (status, info)
    return status
