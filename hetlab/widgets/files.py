"""The workbench's files: profiles and plans saved to and loaded from one folder, the
profiles that ship with hetlab, and the Perfetto (Chrome trace-event) export of the last run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.schedulers.plan import Plan
from hetlab.widgets.shipped import load_shipped, shipped_names


class Files:
    """Mixed into ``Workbench``: reads its ``problem``, plans and ``last_run``."""

    problem: Any
    state: Any
    last_run: Any

    def _folder(self) -> Path:
        return Path(self.path_text.value.strip() or ".")

    def save_profile(self, path: str | Path | None = None) -> Path | None:
        """Save the profile shown (a what-if copy records its factors in ``extra``)."""
        if self.problem is None:
            self._say("file", "no profile to save", "warn")
            return None
        p = Path(path) if path else self._folder() / f"{self.problem.name}.problem.json"
        if not self._written(lambda: self.problem.save(p)):
            return None
        self._say("file", f"saved profile to {p}", "ok")
        return p

    def _written(self, write: Any) -> bool:
        """Run ``write``; a folder that cannot be written is one line in the status."""
        try:
            write()
        except (HetlabError, OSError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            self._say("file", f"cannot write in {self._folder()}: {why}", "error")
            return False
        return True

    def load_profile(self, path: str | Path | None = None) -> None:
        """Load ``path`` (or the folder's first ``*.problem.json``; a shipped profile's name
        is one too) as the profile: a new state."""
        if isinstance(path, str) and not Path(path).exists() and path in shipped_names():
            self.load_shipped(path)
            return
        folder = self._folder()
        try:
            if path is None:
                found = sorted(folder.glob("*.problem.json"))
                if not found:
                    raise HetlabError(
                        f"no *.problem.json in {folder}: save a profile there first, "
                        "or open a shipped one"
                    )
                path = found[0]
            prob = Problem.load(path)
        except HetlabError as e:
            self._say("file", str(e), "error")
            return
        self._opened(prob, f"loaded from {path}")
        self._say("file", f"loaded profile {path}", "ok")

    def load_shipped(self, name: str) -> None:
        """Open the shipped profile ``name`` (``hope/<name>`` or ``<platform>/<model>``)."""
        if not name:
            return
        try:
            prob = load_shipped(name)
        except HetlabError as e:
            self._say("file", str(e), "error")
            return
        self._opened(prob, f"shipped: {name}")
        if self.shipped_select.value != name and name in shipped_names():
            self.shipped_select.value = name

    def _opened(self, prob: Problem, source: str) -> None:
        with self._ui:
            self._reset_progress()
            self.use_problem(prob, source)

    def save_plans(self) -> list[Path]:
        out: list[Path] = []
        st = self.state
        for tag, plan in (("ilp", st.plan("ilp_plan")), ("compared", st.plan("greedy_plan"))):
            target = self._folder() / f"{plan.problem}.{tag}.plan.json" if plan else None
            if plan is not None and not self._written(
                lambda p=plan, t=target: out.append(p.save(t))
            ):
                return out
        self._say(
            "file",
            f"saved {len(out)} plan(s) to {self._folder()}" if out else "no plans to save",
            "ok" if out else "warn",
        )
        return out

    def load_plans(self) -> None:
        """Load the saved plans of this problem, re-timed under it; they replace the solved
        ones until a parameter moves again."""
        if self.problem is None:
            self._say("file", "load or make a profile first", "warn")
            return
        n = 0
        try:
            for tag, slot in (("ilp", "ilp_plan"), ("compared", "greedy_plan")):
                f = self._folder() / f"{self.problem.name}.{tag}.plan.json"
                if f.exists():
                    plan = Plan.load(f).timed(self.problem)
                    # shown with no key: a solve still running for this slot is stale
                    self._show_plan(slot, plan, f"loaded from {f}", key=None)
                    n += 1
        except HetlabError as e:
            self._say("file", str(e), "error")
            return
        self._say(
            "file",
            f"loaded {n} plan(s)" if n else f"no saved plans in {self._folder()}",
            "ok" if n else "warn",
        )

    def export_trace(self, path: str | Path | None = None) -> Path | None:
        """Write the last run's Chrome trace-event JSON (open it in ui.perfetto.dev)."""
        if self.last_run is None:
            self._say("file", "run a plan first: there is no trace to export", "warn")
            return None
        report, tag = self.last_run
        name = self.problem.name if self.problem is not None else "run"
        p = Path(path) if path else self._folder() / f"{name}.{tag}.trace.json"
        if not self._written(
            lambda: (p.parent.mkdir(parents=True, exist_ok=True), report.write_trace(p))
        ):
            return None
        self._say("file", f"wrote {p}: open it in ui.perfetto.dev", "ok")
        return p
