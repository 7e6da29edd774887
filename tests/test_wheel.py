"""A plain install of the wheel works: built from this checkout, installed into a fresh venv,
it lists the zoo and runs a zoo model on a CPU group from outside the repository."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def sh(*cmd: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    r = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    return r.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """(the fresh venv's python, an environment whose other packages come from this one)."""
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    sh(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT), cwd=tmp)
    wheel = next((tmp / "dist").glob("hetlab-*.whl"))
    venv = tmp / "venv"
    sh(sys.executable, "-m", "venv", "--without-pip", str(venv), cwd=tmp)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # else the checkout
    sh(*pip, "install", "-q", "--no-deps", str(wheel), cwd=tmp, env=clean)  # counts as installed
    # the dependencies come from this environment's site-packages on PYTHONPATH, where
    # .pth files (the editable install of this checkout) are not read
    env = {**os.environ, "PYTHONPATH": sysconfig.get_paths()["purelib"], "HETLAB_CACHE": str(tmp)}
    return python, env


def test_the_wheel_is_what_runs(installed, tmp_path):
    python, env = installed
    where = sh(str(python), "-c", "import hetlab; print(hetlab.__file__)", cwd=tmp_path, env=env)
    assert str(ROOT) not in where and "site-packages" in where


def test_the_installed_wheel_lists_the_zoo_and_runs_a_model(installed, tmp_path):
    python, env = installed
    out = sh(str(python), "-m", "hetlab", "zoo", cwd=tmp_path, env=env)
    assert "squeezenet" in out and "nasnet_large" in out
    run = ["run", "squeezenet", "--device", "cpu0", "--check", "--repeat", "2", "--json"]
    out = sh(str(python), "-m", "hetlab", *run, cwd=tmp_path, env=env)
    assert '"max_rel_err"' in out


def test_the_installed_wheel_brings_its_jupyterlab_extension(installed):
    """The wheel installs the JupyterLab extension where JupyterLab looks for it."""
    python, _env = installed
    ext = python.parent.parent / "share" / "jupyter" / "labextensions" / "hetlab-widgets"
    assert (ext / "package.json").is_file()
    assert (ext / "static" / "remoteEntry.js").is_file()
