"""The bounds-checked debug build of the OpenCL kernels (``kernels/bounds.h``).

With ``HETLAB_CL_BOUNDS=1`` in the environment (or ``bounds_check`` set on an
``OpenCLDevice``) programs are built with ``-DHETLAB_BOUNDS``: every global read and write
checks its index against its buffer's element count, skips the access when it is out of
range and records the first such index in the unit's error record. A checked kernel has
extra trailing arguments, named in ``bounds.h``: ``hl_err`` and ``hl_site``, and per
``__global`` buffer ``b`` the range ``b_hl0``, ``b_hln``. ``Checks`` finds them by name
(the program is built with ``-cl-kernel-arg-info``) and sets them once per unit, the counts
from each bound buffer's allocated size (again as a unit input is rebound); ``verify``, after
every run, raises ``HetlabError`` naming the kernel, node, index and source line of the first
violation. The normal build has none of these arguments: its kernels and launches are as
written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hetlab.errors import HetlabError

ENV = "HETLAB_CL_BOUNDS"
OPTIONS = ["-DHETLAB_BOUNDS", "-cl-kernel-arg-info"]
RECORD = 8  # ints: violations, site, line, index lo/hi, count lo/hi, is a write
KERNEL_DIR = Path(__file__).parent / "cl"
ELEM_BYTES = {
    "float": 4,
    "int": 4,
    "int4": 16,
    "long": 8,
    "uchar": 1,
    "ushort": 2,
    "char": 1,
}  # pointee types of the kernels' buffers


def from_env() -> bool:
    """Whether ``HETLAB_CL_BOUNDS`` asks for the checked build (set and not ``0``)."""
    return os.environ.get(ENV, "0").strip() not in ("", "0")


class Checks:
    """The error record of one prepared unit and where each launch's bound arguments are.

    ``buffers`` are the unit's own tensor buffers by name; a launch argument naming none of
    them is a unit input, bound per run: its count is set by ``bound`` (0 until then).
    """

    def __init__(
        self,
        device: Any,
        launches: Sequence[Any],
        files: dict[int, str],
        buffers: dict[str, Any],
    ) -> None:
        self.device, self.launches, self.files = device, list(launches), files
        self.err = device.alloc((RECORD,), "int32")
        device.write(self.err, np.zeros(RECORD, np.int32))
        self.counts: dict[int, dict[int, tuple[int, int]]] = {}
        for site, L in enumerate(self.launches):
            self.counts[id(L)] = self._arm(L, site, buffers)

    def _arm(self, L: Any, site: int, buffers: dict[str, Any]) -> dict[int, tuple[int, int]]:
        """Set the launch's check arguments; per buffer argument, the index of its count
        argument and its element size."""
        cl, k = self.device.cl, L.kernel
        info = cl.kernel_arg_info
        try:
            names = [k.get_arg_info(i, info.NAME) for i in range(k.num_args)]
        except cl.Error:
            raise HetlabError(
                f"kernel {k.function_name} has no argument names; the bounds check needs "
                "a program built with -cl-kernel-arg-info"
            ) from None
        if "hl_err" not in names:
            raise HetlabError(f"kernel {k.function_name} was built without the bounds check")
        k.set_arg(names.index("hl_err"), self.err.buf)
        k.set_arg(names.index("hl_site"), np.int32(site))
        out: dict[int, tuple[int, int]] = {}
        for i, name in enumerate(names):
            glob = (
                k.get_arg_info(i, info.ADDRESS_QUALIFIER) == cl.kernel_arg_address_qualifier.GLOBAL
            )
            if not glob or name == "hl_err":
                continue
            if f"{name}_hln" not in names:
                raise HetlabError(
                    f"kernel {k.function_name}: __global argument {name} has no HL_N bound"
                )
            pointee = k.get_arg_info(i, info.TYPE_NAME).replace("*", "").split()[-1]
            if pointee not in ELEM_BYTES:
                raise HetlabError(f"kernel {k.function_name}: no element size for {pointee}*")
            k.set_arg(names.index(f"{name}_hl0"), np.int64(0))
            out[i] = (names.index(f"{name}_hln"), ELEM_BYTES[pointee])
            buf = _buffer(L.args[i], buffers) if i < len(L.args) else None
            k.set_arg(out[i][0], np.int64(0 if buf is None else buf.size // out[i][1]))
        return out

    def bound(self, launch: Any, index: int, buf: Any) -> None:
        """Argument ``index`` of ``launch`` is now ``buf`` (a unit input): set its count."""
        slot = self.counts[id(launch)].get(index)
        if slot is not None:
            launch.kernel.set_arg(slot[0], np.int64(buf.size // slot[1]))

    def verify(self) -> None:
        """Raise ``HetlabError`` for the first out-of-range index of the runs since the
        last check, and clear the record."""
        rec = self.device.copy_out(self.err).astype(np.int64)
        if rec[0] == 0:
            return
        self.device.write(self.err, np.zeros(RECORD, np.int32))
        raise HetlabError(self.describe(rec))

    def describe(self, rec: np.ndarray) -> str:
        """One line for the error record ``rec``."""
        L = self.launches[int(rec[1])] if 0 <= rec[1] < len(self.launches) else None
        name = L.kernel.function_name if L is not None else "?"
        node = L.node if L is not None else "?"
        index = int(rec[3] & 0xFFFFFFFF) | (int(rec[4]) << 32)
        count = int(rec[5] & 0xFFFFFFFF) | (int(rec[6]) << 32)
        where = self._line(L, int(rec[2]))
        return (
            f"bounds check: kernel {name} of node {node} (launch {int(rec[1])} of a unit on "
            f"{self.device.name}) {'wrote' if rec[7] else 'read'} index {index} of a buffer of "
            f"{count} elements at {where}; {int(rec[0])} out-of-range access(es) in all"
        )

    def _line(self, launch: Any, line: int) -> str:
        filename = self.files.get(id(launch.kernel), "?") if launch is not None else "?"
        try:
            text = (KERNEL_DIR / filename).read_text().splitlines()[line - 1].strip()
        except (OSError, IndexError):
            return f"{filename}:{line}"
        return f"{filename}:{line} ({text})"


def _buffer(arg: Any, buffers: dict[str, Any]) -> Any:
    """The OpenCL buffer a launch argument stands for: itself, or the unit's buffer of the
    tensor it names (a builder ``Ref``); None for a unit input."""
    if hasattr(arg, "int_ptr"):
        return arg
    own = buffers.get(getattr(arg, "name", None))
    return None if own is None else own.buf
