"""``wgpsim.columns.Columns``: the tables ``wgpsim run`` writes without pandas are the files
pandas writes, and the Python API still returns DataFrames."""

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wgpsim.columns import Columns
from wgpsim.experiments import run_experiment

ROOT = Path(__file__).resolve().parents[1]

TEXT = st.text(st.sampled_from("ab1.- ,;\"'\n\r\té²"), max_size=6)  # what CSV must quote
FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.none()
COLUMN = st.sampled_from(["int", "float", "str", "bool"])
VALUES = {
    "int": st.integers(-(2**62), 2**62),
    "float": FLOATS,
    "str": TEXT | st.none(),
    "bool": st.booleans(),
}


@st.composite
def tables(draw):
    """Columns of one type each (as an experiment's rows give them), 0-5 rows."""
    kinds = draw(st.lists(COLUMN, min_size=1, max_size=5))
    rows = draw(st.integers(0, 5))
    return Columns(
        {
            f"c{i},{kind}": tuple(draw(st.lists(VALUES[kind], min_size=rows, max_size=rows)))
            for i, kind in enumerate(kinds)
        }
    )


@given(tables())
def test_csv_is_what_pandas_writes(table):
    """Byte for byte, quoting, empty cells, floats' shortest repr and a header with a comma."""
    assert table.csv_text() == table.to_frame().to_csv(index=False)


@given(tables())
def test_a_frame_round_trips(table):
    back = Columns.of(table.to_frame())
    assert back.columns == table.columns and len(back) == len(table)
    for name in table.columns:
        for mine, theirs in zip(table[name], back[name], strict=True):
            missing = mine is None or (isinstance(mine, float) and math.isnan(mine))
            assert (theirs is None or theirs != theirs) if missing else theirs == mine


def test_rows_are_plain_values():
    import numpy as np

    rows = Columns({"n": (np.int64(3),), "x": (np.float64(0.5),)}).rows()
    assert rows == [{"n": 3, "x": 0.5}] and type(rows[0]["n"]) is int


def test_columns_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="different lengths"):
        Columns({"a": (1, 2), "b": (1,)})


@pytest.fixture(scope="module")
def lds_runs():
    config = ROOT / "configs" / "lds_bandwidth.yaml"
    options = {"overrides": ["burst_lengths=[4, 16, 32]"]}
    return run_experiment(config, **options), run_experiment(config, frames=False, **options)


def test_the_api_returns_frames_and_the_cli_path_columns(lds_runs):
    frames, columns = lds_runs
    assert all(isinstance(t, pd.DataFrame) for t in frames.tables.values())
    assert isinstance(frames.display, pd.DataFrame)
    assert all(isinstance(t, Columns) for t in columns.tables.values())
    assert frames.records() == columns.records()


def test_written_files_are_the_frames_csv(lds_runs, tmp_path):
    """What ``wgpsim run`` writes from Columns is what the DataFrames the API returns write."""
    frames, columns = lds_runs
    written = columns.write(tmp_path)
    assert sorted(p.name for p in written if p.suffix == ".csv") == sorted(
        f"{n}.csv" for n in frames.tables
    )
    for name, df in frames.tables.items():
        assert (tmp_path / f"{name}.csv").read_text() == df.to_csv(index=False)
