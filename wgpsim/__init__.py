"""wgpsim: a cycle-approximate simulator of the MI450 (gfx1250) WGP LDS datapath.

Layers (each imports only those before it): ``layout`` -> ``trace`` -> ``hw`` -> ``engine`` ->
``analysis`` -> ``experiments`` -> ``cli`` / ``plots``. See ``docs/DESIGN.md``.

The common entry points are available from the top level and imported on first use, so that
``import wgpsim`` stays light:

>>> import wgpsim
>>> low = wgpsim.lower(
...     shared="#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>",
...     dst="#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], "
...     "lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [], block = []}>",
...     shape=(32, 8), dtype="bf16")
>>> low.instruction, low.counts
('ds_load_tr16_b128', {'ds_load_tr16_b128': 1})
>>> wgpsim.simulate(low.trace()).passes
2
"""

from wgpsim.lazy import exports

__version__ = "0.1.0"

_LAZY = {
    "LinearLayout": "wgpsim.layout",
    "parse": "wgpsim.layout",
    "local_load_addresses": "wgpsim.layout",
    "Trace": "wgpsim.trace",
    "TraceBuilder": "wgpsim.trace",
    "read_trace": "wgpsim.trace",
    "write_trace": "wgpsim.trace",
    "lower": "wgpsim.trace.lowering",
    "HardwareConfig": "wgpsim.hw",
    "load_hardware": "wgpsim.hw",
    "allocate": "wgpsim.hw",
    "simulate": "wgpsim.engine",
    "Result": "wgpsim.engine",
    "run_experiment": "wgpsim.experiments",
}

__all__ = ["__version__", *_LAZY]
__getattr__, __dir__ = exports(__name__, _LAZY)
