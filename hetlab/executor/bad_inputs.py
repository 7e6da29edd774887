"""Inputs the model itself cannot run on: one story on every device.

A kernel device does not check what onnxruntime checks (a ``Gather`` index past its table
reads some other row), and an onnxruntime device fails mid-run with its unit's name. So where
a run fails, or the reference run of ``--check`` does, plain onnxruntime runs the model on
the same inputs once; if it fails too, the inputs are to blame, and every device reports
``InputsRejected`` with onnxruntime's message and the same exit status as any bad input."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.graph.ort_session import reference_session, run_quietly


class InputsRejected(HetlabError):
    """The model's own onnxruntime run fails on the given inputs (a bad input, exit 2)."""


def reference_failure(graph: OpGraph, feed: Mapping[str, Any]) -> str | None:
    """onnxruntime's message, on one line, where one plain CPU session of the model as given
    (``source_path``) fails to run on ``feed``; None where it runs, or where no session can
    be made at all (then the inputs are not what fails)."""
    path = graph.source_path or graph.model_path
    if not path:
        return None
    try:
        sess = reference_session(str(path), optimize=True)
    except Exception:  # noqa: BLE001  a model onnxruntime cannot load: not the inputs' fault
        return None
    names = [i.name for i in sess.get_inputs()]
    try:
        run_quietly(sess, None, {k: feed[k] for k in names if k in feed})
    except Exception as e:  # noqa: BLE001  onnxruntime's errors become one line
        return _one_line(str(e)) or type(e).__name__
    return None


def rejected(graph: OpGraph, feed: Mapping[str, Any]) -> InputsRejected | None:
    """``InputsRejected`` naming onnxruntime's message where the model's own run fails on
    ``feed``; None where it runs."""
    why = reference_failure(graph, feed)
    if why is None:
        return None
    return InputsRejected(
        f"the model's reference onnxruntime run failed on these inputs: {why}; give real "
        "inputs with --input NAME=FILE.npy (or NAME=NUMBER)"
    )


def check_inputs(graph: OpGraph, feed: Mapping[str, Any]) -> None:
    """Raise ``InputsRejected`` where the model's own onnxruntime run fails on ``feed``."""
    bad = rejected(graph, feed)
    if bad is not None:
        raise bad


@contextmanager
def inputs_blamed(graph: OpGraph, feed: Mapping[str, Any]) -> Iterator[None]:
    """A failure inside (a unit's, the reference's) becomes ``InputsRejected`` where the
    model's own onnxruntime run fails on ``feed`` too; otherwise it passes unchanged."""
    try:
        yield
    except InputsRejected:
        raise
    except HetlabError:
        bad = rejected(graph, feed)
        if bad is not None:
            raise bad from None
        raise


def _one_line(msg: str) -> str:
    """onnxruntime's message without its status prefix, whitespace folded."""
    msg = re.sub(r"^\s*\[ONNXRuntimeError\]\s*:\s*\d+\s*:\s*[A-Z_]+\s*:\s*", "", msg)
    return " ".join(msg.split())[:400]
