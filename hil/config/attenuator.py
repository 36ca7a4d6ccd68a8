"""A Wi-Fi DUT's `wifi: attenuator:` section: the programmable RF attenuator between the access
point and the DUT that the signal sweep (hil.scenarios.families.signal) steps, and optionally the
AP's transmit power as a second knob.

    wifi:
      attenuator:
        command: "rudat-cli --serial 11901230025 set {db}"   # a USB/serial/HTTP unit's own tool
        min_db: 0
        max_db: 60
        step_db: 2
        start_db: 0            # set before the sweep and restored after it (also after Ctrl-C)
        settle_s: 2            # after each step: the unit settles, the DUT's rate control adapts
        expected_range_db: 40  # the DUT is expected to keep a link up to here: falling to zero before is a failure
        ap_tx_power: {command: "ssh ap iw dev wlan0 set txpower fixed {mbm}", dbm: 17}

On the virtual bench `virtual: true` stands for the command: the suite's virtual attenuator drives
the host firmware's radio model (hil.plumbing.attenuator).
"""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_STEPS = 200


class Strict(BaseModel):  # hil.config.sections's, which imports this module
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ApTxPower(Strict):
    """The AP's transmit power: a command template with `{dbm}` (or `{mbm}`, hundredths of a dBm,
    as `iw` takes it) and the value the sweep runs at."""

    command: Annotated[str, Field(min_length=1)]
    dbm: Annotated[float, Field(ge=-30, le=40)]

    @model_validator(mode="after")
    def _placeholder(self) -> ApTxPower:
        if "{dbm}" not in self.command and "{mbm}" not in self.command:
            raise ValueError("command: has no {dbm} or {mbm} where the power goes")
        return self


class AttenuatorConfig(Strict):
    command: Annotated[str, Field(min_length=1)] | None = None
    virtual: bool = False
    min_db: Annotated[float, Field(ge=0, le=200)] = 0.0
    max_db: Annotated[float, Field(gt=0, le=200)]
    step_db: Annotated[float, Field(gt=0, le=100)]
    start_db: Annotated[float, Field(ge=0, le=200)] | None = None
    settle_s: Annotated[float, Field(ge=0, le=120)] = 1.0
    timeout_s: Annotated[float, Field(gt=0, le=120)] = 10.0
    expected_range_db: Annotated[float, Field(ge=0, le=200)] | None = None
    ap_tx_power: ApTxPower | None = None
    # the virtual bench only: the host firmware's planted bad point (its radio halves the rate here)
    planted_bad_point_db: Annotated[int, Field(ge=0, le=200)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> AttenuatorConfig:
        if (self.command is None) == (not self.virtual):
            raise ValueError("give either command: (a template with {db}) or virtual: true, not both, not neither")
        if self.command is not None and "{db}" not in self.command:
            raise ValueError("command: has no {db} where the attenuation goes")
        if self.min_db >= self.max_db:
            raise ValueError(f"min_db {self.min_db:g} must be below max_db {self.max_db:g}")
        if not self.min_db <= self.start <= self.max_db:
            raise ValueError(f"start_db {self.start:g} is outside min_db..max_db ({self.min_db:g}..{self.max_db:g})")
        if len(self.steps()) > MAX_STEPS:
            raise ValueError(f"{len(self.steps())} steps from min_db to max_db by step_db: at most {MAX_STEPS}")
        if self.planted_bad_point_db is not None and not self.virtual:
            raise ValueError("planted_bad_point_db: only the virtual attenuator's station has one to plant")
        if self.virtual and self.ap_tx_power is not None:
            raise ValueError("ap_tx_power: the virtual attenuator is the simulated AP's knob too; give no command")
        return self

    @property
    def start(self) -> float:
        return self.min_db if self.start_db is None else self.start_db

    def steps(self, every: int = 1) -> list[float]:
        """min_db, min_db + step_db, ... up to max_db (max_db itself always the last); `every`:
        every n-th of them, the last one kept."""
        count = math.floor((self.max_db - self.min_db) / self.step_db + 1e-9)
        values = [round(self.min_db + i * self.step_db, 3) for i in range(count + 1)]
        if values[-1] < self.max_db:
            values.append(self.max_db)
        picked = values[::every]
        return picked if picked[-1] == values[-1] else [*picked, values[-1]]
