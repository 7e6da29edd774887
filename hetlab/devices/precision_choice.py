"""The precision a user asks devices to run at: ``"tf32"`` (every device that declares it;
the others stay at fp32, which ``precision_note`` says in one line; none declaring it is one
clear line) or per device
``"cuda0=tf32,cl0=fp32"`` (a device that does not declare what it is asked for refuses in one
line). A device's queue views run at their device's precision: ``cuda0=tf32`` covers
``cuda0.q1`` too. The result is new device objects (``Device.with_precision``); the ones
given are never changed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hetlab.devices.base import Device
from hetlab.devices.platform_file import NAME_RE
from hetlab.devices.precision import FP32, check_precision
from hetlab.errors import HetlabError

# what a user gives: None (each device as it is), one precision, or one per device
PrecisionChoice = str | Mapping[str, str] | None


def parse_precision(text: PrecisionChoice | Sequence[str]) -> str | dict[str, str] | None:
    """``"tf32"`` as ``"tf32"``, ``"cuda0=tf32,cl0=fp32"`` (or a list of such, or a mapping)
    as ``{"cuda0": "tf32", "cl0": "fp32"}``; None for nothing; one clear line for a name
    that is no precision or an item that is not ``DEVICE=PRECISION``."""
    if not text:
        return None
    if isinstance(text, Mapping):
        return {str(k): check_precision(str(v)) for k, v in text.items()}
    parts = [text] if isinstance(text, str) else list(text)
    items = [p.strip() for part in parts for p in part.split(",") if p.strip()]
    if len(items) == 1 and "=" not in items[0]:
        return check_precision(items[0])
    out: dict[str, str] = {}
    for item in items:
        name, sep, prec = (x.strip() for x in item.partition("="))
        if not sep or not NAME_RE.match(name):
            raise HetlabError(
                f"--precision wants PRECISION or DEVICE=PRECISION (e.g. cuda0=tf32), got {item!r}"
            )
        out[name] = check_precision(prec)
    return out


def at_precision(devices: Sequence[Device], choice: PrecisionChoice) -> list[Device]:
    """``devices`` at the precision ``choice`` gives each (see the module doc), in order."""
    choice = parse_precision(choice)
    if choice is None:
        return list(devices)
    if isinstance(choice, str):
        if choice != FP32 and devices and not any(_declares(d, choice) for d in devices):
            raise HetlabError(
                f"--precision {choice}: no device here declares it "
                f"({', '.join(d.name for d in devices if d.root is d)} run at fp32 only); "
                "`hetlab devices` lists each device's precisions"
            )
        return [d.with_precision(choice) if _declares(d, choice) else d for d in devices]
    names = {d.root.name for d in devices} | {d.name for d in devices}
    unknown = sorted(set(choice) - names)
    if unknown:
        raise HetlabError(
            f"--precision names {unknown[0]!r}, which is not among the devices "
            f"({', '.join(d.name for d in devices)})"
        )
    out = []
    for d in devices:
        want = choice.get(d.name, choice.get(d.root.name))
        out.append(d if want is None else d.with_precision(want))
    return out


def precision_note(devices: Sequence[Device], choice: PrecisionChoice) -> str | None:
    """For one precision asked of every device, the line naming those that do not declare
    it and run at fp32; None where there are none or the choice was per device."""
    choice = parse_precision(choice)
    if not isinstance(choice, str) or choice == FP32:
        return None
    left = [d.name for d in devices if d.root is d and not _declares(d, choice)]
    if not left:
        return None
    return (
        f"{', '.join(left)} {'does' if len(left) == 1 else 'do'} not declare {choice}: fp32 there"
    )


def precisions_of(devices: Sequence[Device]) -> dict[str, str]:
    """The devices that run at another precision than fp32, by name (spec §2's
    ``extra.precision``; absent: fp32)."""
    return {d.name: d.precision for d in devices if d.precision != FP32}


def _declares(device: Device, precision: str) -> bool:
    return precision in device.capabilities().precisions


def check_recorded(
    choice: PrecisionChoice, recorded: Mapping[str, str], names: Sequence[str]
) -> None:
    """One clear line where a profile whose devices ``names`` were measured at ``recorded``
    (spec §2's ``extra.precision``) is not what ``choice`` asks: its costs are those of the
    precision it was measured at, so it is profiled again rather than relabelled. One
    precision for all agrees with devices at it or at fp32 (those that do not declare it)."""
    choice = parse_precision(choice)
    if choice is None:
        return
    at = {n: recorded.get(n, FP32) for n in names}
    if isinstance(choice, str):
        wrong = [n for n, p in at.items() if p not in (choice, FP32)]
        if choice != FP32 and choice not in at.values():
            wrong = wrong or list(names)[:1]
        want = dict.fromkeys(wrong, choice)
    else:
        unknown = sorted(set(choice) - set(names))
        if unknown:
            raise HetlabError(f"--precision names {unknown[0]!r}, which the profile does not have")
        want = {n: p for n, p in choice.items() if at[n] != p}
    if want:
        n, p = next(iter(want.items()))
        raise HetlabError(
            f"the profile measured {n} at {at[n]}, not {p}: profile again with --precision "
            f"{n}={p} (a plan's costs are those of the precision its profile measured)"
        )
