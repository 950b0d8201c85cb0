"""What a trace or a ``Result`` says, for any job: rocprof-compute's LDS metrics, bank cycles
without simulating, port ceilings, the steady-state fit, drift rates, ranking by criteria.

See docs/DESIGN.md ("The map") for what this floor holds and may import.
"""

from wgpsim.measures.fit import SteadyStateFit, fit_steady_state

__all__ = ["SteadyStateFit", "fit_steady_state"]
