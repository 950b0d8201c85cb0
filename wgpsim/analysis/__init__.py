"""Analysis of simulated results: metrics, the steady-state fit, candidate ranking.

See docs/DESIGN.md for what this layer holds.
"""

from wgpsim.analysis.fit import SteadyStateFit, fit_steady_state

__all__ = ["SteadyStateFit", "fit_steady_state"]
