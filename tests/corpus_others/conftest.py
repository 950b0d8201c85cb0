"""The kernels import triton and regenerate.py compiles: neither is collected."""

collect_ignore = ["regenerate.py", "kernels"]
