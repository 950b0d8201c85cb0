"""What the warps ask of the LDS: the instruction catalogue, ``Trace``, trace files, generators.

See docs/DESIGN.md ("Core types") for the contract.

>>> from wgpsim.trace import TraceBuilder
>>> b = TraceBuilder(2)
>>> b.loads(0, "ds_load_b128", [list(range(0, 512, 16))])
>>> b.barrier()
>>> b.build()
Trace(2 warps, 3 ops: ds_load_b128 1, barrier 2; 512 LDS bytes)
"""

from wgpsim.errors import TraceError
from wgpsim.trace.generate import (
    microbenchmark_trace,
    random_trace,
    streaming_trace,
    vector_loads,
)
from wgpsim.trace.instructions import (
    INSTRUCTIONS,
    LANES,
    OPS,
    WAVE_SIZES,
    Instruction,
    instruction,
    is_lds,
    op_code,
    op_name,
)
from wgpsim.trace.io import (
    read_jsonl,
    read_parquet,
    read_trace,
    write_jsonl,
    write_parquet,
    write_trace,
)
from wgpsim.trace.trace import Trace, TraceBuilder
from wgpsim.trace.validate import DEFAULT_LDS_BYTES, validate

__all__ = [
    "DEFAULT_LDS_BYTES",
    "INSTRUCTIONS",
    "LANES",
    "WAVE_SIZES",
    "OPS",
    "Instruction",
    "Trace",
    "TraceBuilder",
    "TraceError",
    "instruction",
    "is_lds",
    "microbenchmark_trace",
    "op_code",
    "op_name",
    "random_trace",
    "read_jsonl",
    "read_parquet",
    "read_trace",
    "streaming_trace",
    "validate",
    "vector_loads",
    "write_jsonl",
    "write_parquet",
    "write_trace",
]
