"""wgpsim: a cycle-approximate simulator of the MI450 (gfx1250) WGP LDS datapath.

Layers (each imports only those before it): ``layout`` -> ``trace`` -> ``hw`` -> ``engine`` ->
``analysis`` -> ``experiments`` -> ``cli`` / ``plots``. See ``docs/DESIGN.md``.
"""

__version__ = "0.1.0"
