"""Runs one program on a remote host over SSH, as `ip netns exec NS` runs one in a namespace:
``python ssh_exec.py SSH_ARG... DESTINATION -- PROGRAM ARG...``. It becomes ``ssh`` (exec), so a
caller stops it like any local program (signals, process groups) and gets the remote exit code.

ssh hands the remote side one command line, so the program's arguments are quoted here; the
session gets a terminal (-tt), set raw and without echo before the program starts, so that:
the remote program gets SIGHUP and ends when this ssh ends (killed, Ctrl-C, lost connection: a
remote server never outlives the run), its output arrives byte for byte (no CR added) and its
input is not echoed back. The terminal joins its stderr to its stdout.

Standard library only and run by path: a host prefix costs no import of the suite.
"""

from __future__ import annotations

import os
import shlex
import sys

SEPARATOR = "--"


def remote_command(argv: list[str]) -> str:
    """The shell command line that runs `argv` on the remote host in a raw, silent terminal."""
    return "stty raw -echo 2>/dev/null; exec " + shlex.join(argv)


def ssh_argv(args: list[str]) -> list[str]:
    """ssh's argv from this script's arguments: SSH_ARG... DESTINATION -- PROGRAM ARG..."""
    if SEPARATOR not in args:
        raise ValueError("usage: ssh_exec.py SSH_ARG... DESTINATION -- PROGRAM ARG...")
    cut = args.index(SEPARATOR)
    ssh_args, program = args[:cut], args[cut + 1 :]
    if not ssh_args or not program:
        raise ValueError("usage: ssh_exec.py SSH_ARG... DESTINATION -- PROGRAM ARG...")
    return ["ssh", "-tt", *ssh_args, remote_command(program)]


def main() -> int:
    try:
        argv = ssh_argv(sys.argv[1:])
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    os.execvp(argv[0], argv)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
