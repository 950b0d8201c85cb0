"""One calibration probe as plain data: a name, a family, a warp count and parameters. The MI450
kit's catalogue is :mod:`wgpsim.calibration.probes`, the CDNA lane-pair kit's
:mod:`wgpsim.calibration.lanes.pairs`.

>>> p = Probe("banks_s4", "banks", 1, (("loads", 4), ("stride", 4)))
>>> p.param("stride"), p.to_dict()["params"]
(4, {'loads': 4, 'stride': 4})
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Probe"]


@dataclass(frozen=True)
class Probe:
    """One probe: a unique ``name``, its ``family``, ``warps`` and ``params`` (sorted pairs)."""

    name: str
    family: str
    warps: int
    params: tuple[tuple[str, Any], ...] = ()

    def param(self, key: str) -> Any:
        """The value of parameter ``key``."""
        return dict(self.params)[key]

    def to_dict(self) -> dict[str, Any]:
        """The manifest's record of this probe."""
        return {
            "name": self.name,
            "family": self.family,
            "warps": self.warps,
            "params": dict(self.params),
        }
