"""The LDS traffic of the ops Triton 3.9.0 lowers through a scratch buffer: a cross-warp
``ttg.convert_layout`` (`lowering`, on the generic swizzling of `swizzling`), a ``tt.reduce``
across warps and atomics (`reduce`), a ``tt.scan`` across warps (`scan`).

See docs/DESIGN.md ("Lowering", step 4).
"""
