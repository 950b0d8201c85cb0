"""Experiment YAML: loading, overrides, validation messages, and the kinds registry."""

from pathlib import Path

import pytest

from wgpsim.errors import ConfigError
from wgpsim.experiments import ExperimentResult, kinds, register_kind, run_experiment
from wgpsim.sweeps.config import (
    ConfigSource,
    Field,
    apply_overrides,
    check_fields,
    closest,
    load_config,
)

SRC = ConfigSource("exp.yaml", Path("/cfg"))
FIELDS = (
    Field("kind", str),
    Field("warps", int, default=4),
    Field("rate", float, default=1.0),
    Field("burst_lengths", list, items=int),
    Field("dtype", str, default="fp16", choices=("fp16", "bf16", "fp32")),
    Field("layouts", dict, default={}),
)


def test_defaults_are_filled_and_copied():
    out = check_fields({"kind": "k", "burst_lengths": [1, 2]}, FIELDS, SRC)
    assert out == {
        "kind": "k",
        "warps": 4,
        "rate": 1.0,
        "burst_lengths": [1, 2],
        "dtype": "fp16",
        "layouts": {},
    }
    out["layouts"]["x"] = 1
    assert check_fields({"kind": "k", "burst_lengths": [1]}, FIELDS, SRC)["layouts"] == {}


@pytest.mark.parametrize(
    "raw, message",
    [
        (
            {"kind": "k", "burst_lenghts": [1]},
            "exp.yaml: field 'burst_lenghts': unknown field; did you mean 'burst_lengths'?",
        ),
        (
            {"kind": "k", "zzz": 1, "burst_lengths": [1]},
            "exp.yaml: field 'zzz': unknown field; valid: ",
        ),
        ({"kind": "k"}, "exp.yaml: field 'burst_lengths': missing; expected a list"),
        (
            {"kind": "k", "burst_lengths": [1], "warps": "four"},
            "exp.yaml: field 'warps': expected an integer, got str 'four'",
        ),
        (
            {"kind": "k", "burst_lengths": [1], "warps": True},
            "exp.yaml: field 'warps': expected an integer",
        ),
        (
            {"kind": "k", "burst_lengths": [1, "x"]},
            "exp.yaml: field 'burst_lengths[1]': expected an integer, got 'x'",
        ),
        (
            {"kind": "k", "burst_lengths": [1], "dtype": "fp61"},
            "exp.yaml: field 'dtype': unknown value 'fp61'; did you mean 'fp16'?",
        ),
    ],
)
def test_errors_name_file_and_field(raw, message):
    with pytest.raises(ConfigError) as err:
        check_fields(raw, FIELDS, SRC)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_int_is_a_valid_float():
    assert check_fields({"kind": "k", "burst_lengths": [], "rate": 2}, FIELDS, SRC)["rate"] == 2


def test_prefix_names_nested_fields():
    with pytest.raises(ConfigError, match="field 'outer.wraps'.*did you mean 'warps'"):
        check_fields({"wraps": 1}, (Field("warps", int),), SRC, prefix="outer.")


def test_closest():
    assert closest("instrution", ["instruction", "warps"]) == "instruction"
    assert closest("qqq", ["instruction", "warps"]) is None


def test_overrides_parse_yaml_and_nest():
    raw = {"warps": 4, "layouts": {"plain": "#ttg..."}, "hw": {}}
    out = apply_overrides(
        raw, ["warps=8", "burst_lengths=[1, 2]", "hw.ports.bytes_per_cycle=128", "name=x=y"], SRC
    )
    assert out["warps"] == 8
    assert out["burst_lengths"] == [1, 2]
    assert out["hw"] == {"ports": {"bytes_per_cycle": 128}}
    assert out["name"] == "x=y"
    assert raw["warps"] == 4 and raw["hw"] == {}  # the input is not changed
    assert apply_overrides(raw, {"a.b": [3]}, SRC)["a"] == {"b": [3]}


@pytest.mark.parametrize(
    "item, message",
    [
        ("warps", "--set 'warps': expected key=value"),
        ("=3", "expected key=value"),
        ("layouts.plain.vec=2", "field 'layouts.plain' is not a mapping"),
        ("warps=[1", "not valid YAML"),
    ],
)
def test_bad_overrides(item, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        apply_overrides({"layouts": {"plain": "text"}}, [item], SRC)


def test_load_config_file_and_mapping(tmp_path):
    path = tmp_path / "sub" / "e.yaml"
    path.parent.mkdir()
    path.write_text("kind: k\nhardware: hw.yaml\n")
    raw, source = load_config(path)
    assert raw == {"kind": "k", "hardware": "hw.yaml"}
    assert source.name == str(path)
    assert source.resolve("hw.yaml") == path.parent / "hw.yaml"
    assert source.resolve("/abs/hw.yaml") == Path("/abs/hw.yaml")
    raw2, source2 = load_config({"kind": "k"})
    assert raw2 == {"kind": "k"} and source2.name == "<config>"


@pytest.mark.parametrize(
    "text, message",
    [("kind: [1\n", "not valid YAML"), ("- 1\n- 2\n", "expected a YAML mapping")],
)
def test_load_config_bad_yaml(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"^{path}: .*{message}"):
        load_config(path)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "nope.yaml")


def test_registry_runs_a_new_kind_and_writes(tmp_path):
    import pandas as pd

    @register_kind("test_echo")
    def run(raw, source, *, hw_path=None, progress=None):
        cfg = check_fields(raw, (Field("kind", str), Field("n", int, default=2)), source)
        items = list((progress or (lambda it, **_: it))(range(cfg["n"]), total=cfg["n"]))
        table = pd.DataFrame({"i": items, "sq": [i * i for i in items]})
        return ExperimentResult("test_echo", "echo", {"results": table, "extra": table.head(1)})

    assert "test_echo" in kinds() and "lds_bandwidth" in kinds()
    seen = []

    def progress(it, total, **_):
        seen.append(total)
        return it

    result = run_experiment({"kind": "test_echo"}, overrides=["n=3"], progress=progress)
    assert seen == [3]
    assert result.table["sq"].tolist() == [0, 1, 4]
    assert result.records() == [{"i": 0, "sq": 0}, {"i": 1, "sq": 1}, {"i": 2, "sq": 4}]
    written = result.write(tmp_path / "out", parquet=True)
    assert sorted(p.name for p in written) == sorted(
        ["results.csv", "results.parquet", "extra.csv", "extra.parquet"]
    )
    assert pd.read_parquet(tmp_path / "out" / "results.parquet")["sq"].tolist() == [0, 1, 4]
    with pytest.raises(ConfigError, match="<config>: field 'm': unknown field; valid: kind, n"):
        run_experiment({"kind": "test_echo", "m": 1})


def test_unknown_and_missing_kind():
    with pytest.raises(
        ConfigError, match="field 'kind': unknown kind 'lds_bandwith'; did you mean 'lds_bandwidth'"
    ):
        run_experiment({"kind": "lds_bandwith"})
    with pytest.raises(ConfigError, match="field 'kind': missing; expected one of .*lds_bandwidth"):
        run_experiment({"warps": 4})
