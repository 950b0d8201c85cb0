"""The matrix-core layouts: ``#ttg.amd_wmma`` (gfx1250, :mod:`.wmma`) and ``#ttg.amd_mfma``
(gfx942/gfx950, :mod:`.mfma`), each with its dot operands; their names are also offered by
`wgpsim.layout`."""
