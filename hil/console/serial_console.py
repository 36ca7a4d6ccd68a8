"""The console driver on a serial port opened directly (a USB serial device or the virtual DUT's
pseudo-terminal), for the firmware's own tests and the benchmark: the HIL tests go through
pytest-embedded (hil.console.embedded_console). Every line received is kept in `transcript`."""

from __future__ import annotations

import time
from typing import Self

import serial

from hil.console.driver import ConsoleDriver
from hil.errors import DutError


class SerialSource:
    def __init__(self, port: str, baudrate: int) -> None:
        self.name = port
        self.baudrate = baudrate
        self.transcript: list[str] = []
        self._serial: serial.SerialBase | None = None
        self._pending = b""
        self._backlog: list[str] = []

    def open(self) -> None:
        try:
            self._serial = serial.serial_for_url(self.name, baudrate=self.baudrate, timeout=0.05)
        except (serial.SerialException, OSError) as exc:
            raise DutError(f"cannot open DUT console {self.name}: {exc}") from exc

    def close(self) -> None:
        if self._serial is not None:
            self._serial.close()
            self._serial = None

    def _port(self) -> serial.SerialBase:
        if self._serial is None:
            raise DutError("DUT console is not open")
        return self._serial

    def send(self, line: str) -> None:
        self._port().write(line.encode("ascii", errors="replace") + b"\r\n")

    def write_raw(self, data: bytes) -> None:
        self._port().write(data)

    def _read_available(self, wait_s: float) -> None:
        port = self._port()
        try:
            chunk = port.read(max(1, port.in_waiting))
        except (serial.SerialException, OSError) as exc:
            raise DutError(f"DUT console {self.name} failed: {exc}") from exc
        if not chunk:
            time.sleep(min(wait_s, 0.01))
            return
        self._pending += chunk
        *complete, self._pending = self._pending.split(b"\n")
        lines = [raw.rstrip(b"\r").decode("ascii", errors="replace") for raw in complete]
        self.transcript.extend(lines)
        self._backlog.extend(lines)

    def poll(self) -> None:
        """Reads what has arrived without waiting (keeps the DUT's output from backing up)."""
        self._read_available(0.0)

    def read_line(self, timeout_s: float) -> str | None:
        deadline = time.monotonic() + timeout_s
        while not self._backlog:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._read_available(remaining)
        return self._backlog.pop(0)


class SerialConsole(ConsoleDriver):
    """The driver on a serial port it opens and closes itself (a context manager)."""

    def __init__(self, port: str, baudrate: int = 115200) -> None:
        self.serial = SerialSource(port, baudrate)
        super().__init__(self.serial)

    @property
    def transcript(self) -> list[str]:
        return self.serial.transcript

    def write_raw(self, data: bytes) -> None:
        self.serial.write_raw(data)

    def poll_lines(self) -> None:
        self.serial.poll()

    def open(self) -> None:
        self.serial.open()

    def close(self) -> None:
        self.serial.close()

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
