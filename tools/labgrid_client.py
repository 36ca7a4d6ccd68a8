"""A labgrid place as JSON, for the suite (hil/plumbing/labgrid_place.py), which never imports labgrid.

Run by the labgrid virtual environment's Python (.venv-labgrid: labgrid's pytest plugin and
pyserial fork stay out of the suite's), with LG_COORDINATOR (and LG_USERNAME, LG_HOSTNAME) set:

    .venv-labgrid/bin/python tools/labgrid_client.py {status|lock|unlock|release-from} PLACE [--kick] [--holder H]

Prints exactly one JSON object on stdout (labgrid's own chatter goes to stderr): the place, who
holds it (`acquired_by`, "host/user"), and its resources: `serial` (the exporter's RFC 2217 port),
`network_interface` (host, ifname), `debug_probe` (the exporter's descriptor of the probe).
Exit code: 0 done, 1 labgrid refused (e.g. the place is held by someone else: `error` says so),
2 the coordinator cannot be reached or the place does not exist.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any

from labgrid.remote.client import Error, ServerError, start_session  # type: ignore[import-not-found]

SERIAL_CLASSES = {"NetworkSerialPort"}
NETIF_CLASSES = {"RemoteNetworkInterface", "RemoteUSBNetworkInterface"}
# labgrid has no class for a pyOCD/OpenOCD probe it exports usefully (USBDebugger matches a fixed
# list of USB ids without Atmel's EDBG): an exporter describes it with a class of its own
# (`DebugProbe`: target, serial, tool), which labgrid exports as it is
PROBE_CLASSES = {"DebugProbe", "NetworkUSBDebugger"}


def _paths(session: Any, place: Any) -> list[tuple[str, str, str, str]]:
    """The resources the place holds (locked) or would get (not locked)."""
    if place.acquired:
        return [tuple(p) for p in place.acquired_resources]
    out = []
    for exporter, groups in sorted(session.resources.items()):
        for group_name, group in sorted(groups.items()):
            for name, res in sorted(group.items()):
                if "cls" in res.data and place.hasmatch((exporter, group_name, res.cls, name)):
                    out.append((exporter, group_name, res.cls, name))
    return out


def describe(session: Any, place: Any, me: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "place": place.name,
        "me": me,
        "acquired_by": place.acquired,
        "mine": place.acquired == me,
        "matches": [repr(m) for m in place.matches],
        "resources": {},
        "serial": None,
        "network_interface": None,
        "debug_probe": None,
    }
    for exporter, group, cls, name in _paths(session, place):
        try:
            res = session.resources[exporter][group][name]
        except KeyError:
            out["resources"][name] = {"cls": cls, "exporter": exporter, "group": group, "avail": False, "gone": True}
            continue
        p = dict(res.args)
        out["resources"][name] = {"cls": res.cls, "exporter": exporter, "group": group, "avail": res.avail, "params": p}
        if res.cls in SERIAL_CLASSES and out["serial"] is None:
            protocol = p.get("protocol") or "rfc2217"
            out["serial"] = {"host": p.get("host"), "port": p.get("port"), "protocol": protocol,
                             "speed": p.get("speed"), "avail": res.avail}  # fmt: skip
        elif res.cls in NETIF_CLASSES and out["network_interface"] is None:
            out["network_interface"] = {"host": p.get("host"), "ifname": p.get("ifname"), "avail": res.avail}
        elif res.cls in PROBE_CLASSES and out["debug_probe"] is None:
            out["debug_probe"] = {**p, "cls": res.cls, "avail": res.avail}
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("action", choices=["status", "lock", "unlock", "release-from"])
    parser.add_argument("place")
    parser.add_argument("--kick", action="store_true", help="unlock a place held by another user")
    parser.add_argument("--holder", help="release-from: the holder (host/user) whose lock is released")
    opt = parser.parse_args()
    address = os.environ.get("LG_COORDINATOR", "")
    result: dict[str, Any] = {"ok": False, "action": opt.action, "place": opt.place, "coordinator": address}
    rc = 0
    session = None
    try:
        with contextlib.redirect_stdout(sys.stderr):  # labgrid prints "acquired place ..." on stdout
            args = argparse.Namespace(place=opt.place, kick=opt.kick, allow_unmatched=False, acquired=opt.holder)
            session = start_session(address, extra={"args": args})
            me = f"{session.gethostname()}/{session.getuser()}"
            if opt.place not in session.places:  # `-p` would match a substring of another place's name
                raise LookupError(f"no place {opt.place!r} at the coordinator {address}")
            try:
                if opt.action == "lock":
                    session.loop.run_until_complete(session._acquire_place(opt.place))
                elif opt.action == "unlock":
                    session.loop.run_until_complete(session._release_place(opt.place))
                elif opt.action == "release-from":  # only if `holder` still holds it (atomic at the coordinator)
                    if not opt.holder:
                        raise LookupError("release-from needs --holder HOST/USER")
                    session.loop.run_until_complete(session.release_from())
            except Error as exc:
                result["error"] = str(exc).strip()
                rc = 1
            session.loop.run_until_complete(session.sync_with_coordinator())
            result.update(describe(session, session.get_place(opt.place), me))
            result["ok"] = rc == 0
    except LookupError as exc:
        result["error"] = str(exc)
        rc = 2
    except Error as exc:  # the coordinator cannot be reached
        result["error"] = str(exc).strip()
        rc = 2 if isinstance(exc, ServerError) or "connect" in str(exc).lower() else 1
    except Exception as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
        rc = 2
    finally:
        if session is not None:
            with contextlib.redirect_stdout(sys.stderr), contextlib.suppress(Exception):
                session.loop.run_until_complete(session.stop())
                session.loop.run_until_complete(session.close())
    print(json.dumps(result, sort_keys=True))
    return rc


if __name__ == "__main__":
    sys.exit(main())
