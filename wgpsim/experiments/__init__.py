"""Experiments run from YAML: each ``kind`` is a function from a validated config to tables.

A kind registers itself with :func:`register_kind` in a module of its job's package, named in
:data:`KIND_MODULES`; the module is imported the first time an experiment of its kind runs, so
adding a kind is adding a module and its line there::

    @register_kind("lds_bandwidth")
    def run(raw, source, *, hw_path=None, progress=None, execution=None) -> ExperimentResult: ...

The runner gets the raw mapping (``kind`` included, ``--set`` overrides applied, the
``execution`` section taken out) and its :class:`~wgpsim.sweeps.config.ConfigSource`,
validates it with the helpers of :mod:`wgpsim.sweeps.config` before any heavy work, and
returns an :class:`ExperimentResult`. ``progress`` is a tqdm-like wrapper ``progress(iterable,
total=..., desc=...)`` or None.

Sweeps run through one executor (:mod:`wgpsim.sweeps.executor`): a runner that takes
``execution`` (an :class:`~wgpsim.sweeps.executor.Execution`: workers, Dask scheduler,
checkpoint, progress) runs each sweep with one call, ``execution.map(fn, points, desc=...)``,
where ``fn`` is a module-level function of one point (bind the config with
``functools.partial``) returning a row dict. Every config may hold an ``execution`` section,
``{workers: N}``; the arguments of :func:`run_experiment` (the CLI's ``--workers``) take
precedence over it. A Dask scheduler is named only by the ``scheduler`` argument (the CLI's
``--scheduler`` or ``$WGPSIM_SCHEDULER``), never by a config file: connecting to a scheduler
trusts it (what it returns is unpickled in this process), and a shared config must not choose
whom a user trusts.

>>> "lds_bandwidth" in kinds()
True
>>> run_experiment({"kind": "lds_bandwidht"})
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: <config>: field 'kind': unknown kind 'lds_bandwidht'; did you mean 'lds_bandwidth'?
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from wgpsim.errors import ConfigError, shown
from wgpsim.sweeps.checkpoint import Checkpoint
from wgpsim.sweeps.config import (
    ConfigSource,
    Field,
    apply_overrides,
    check_fields,
    closest,
    flatten,
    load_config,
)
from wgpsim.sweeps.executor import SCHEDULER_ENV, Execution
from wgpsim.sweeps.kinds import KINDS as _KINDS
from wgpsim.sweeps.kinds import ExperimentResult, Runner, register_kind

KIND_MODULES = {
    "lds_bandwidth": "wgpsim.microbench.bandwidth",
    "gemm_candidates": "wgpsim.microbench.gemm_candidates",
    "layout_search": "wgpsim.search.layout_search",
}
"""Kind name -> the module that registers it (each job holds its own kinds)."""

EXECUTION_FIELDS = (
    Field(
        "workers",
        int,
        default=None,
        doc="local worker processes (default: every core)",
        valid=(1, 1024),
    ),
)


def _discover() -> None:
    for module in KIND_MODULES.values():
        importlib.import_module(module)


def kinds() -> list[str]:
    """Names of every registered experiment kind."""
    _discover()
    return sorted(_KINDS)


def run_experiment(
    config: str | Path | Mapping[str, Any],
    *,
    hw_path: str | Path | None = None,
    overrides: Sequence[str] | Mapping[str, Any] | None = None,
    progress: Callable[..., Iterable] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    checkpoint: str | Path | Checkpoint | None = None,
    resume: bool = False,
    kind: str | None = None,
    frames: bool = True,
) -> ExperimentResult:
    """Load ``config`` (a YAML path or a mapping), apply ``overrides`` and run its kind.

    ``hw_path`` replaces the config's ``hardware`` file. Every config error is raised (as
    :class:`~wgpsim.errors.ConfigError`) before the experiment does any work. ``workers`` and
    ``scheduler`` choose where the sweep's points run (``workers`` overrides the config's
    ``execution`` section; see :mod:`wgpsim.sweeps.executor`); ``checkpoint`` is a JSON
    Lines file that records each finished point, and ``resume`` reuses the points already in it.
    Given as a path, the checkpoint is locked for the run and kept to this run's lines when it
    succeeds; given as a :class:`~wgpsim.sweeps.checkpoint.Checkpoint`, its owner (the CLI,
    which writes the tables first) calls ``finish`` and ``close``. ``kind``, if given, is the
    only kind the caller runs (``wgpsim search``: ``layout_search``). The tables are
    DataFrames; with ``frames=False`` they stay as the kind built them (``wgpsim run``, which
    prints and writes :class:`~wgpsim.columns.Columns` without importing pandas).

    Every problem of the config is reported at once: one ConfigError whose ``messages`` name
    each bad field (in the file, or the ``--set`` that gave it).
    """
    raw, source = load_config(config)
    if kind is not None and raw.get("kind") != kind:
        raise source.error("kind", _other_kind(raw.get("kind"), kind))
    raw = apply_overrides(raw, overrides, source)
    used = _overrides_used(raw, overrides, hw_path)
    execution = Execution()
    with source.check():
        execution = _execution(raw.pop("execution", None), source, workers, scheduler)
    try:
        runner = _runner_for(raw.get("kind"), source)
    except ConfigError as err:
        source.problems.raise_any(also=err)
    owned = checkpoint is not None and not isinstance(checkpoint, Checkpoint)
    if owned:
        checkpoint = Checkpoint(checkpoint, resume=resume, lock=True)
    execution = replace(execution, progress=progress, checkpoint=checkpoint)
    try:
        if "execution" in inspect.signature(runner).parameters:
            result = runner(raw, source, hw_path=hw_path, progress=progress, execution=execution)
        else:
            result = runner(raw, source, hw_path=hw_path, progress=progress)
        if owned:
            checkpoint.finish()
    except ConfigError as err:  # with every problem the checks had kept before it
        source.problems.raise_any(also=err)
        raise
    finally:
        if owned:
            checkpoint.close()
    result = replace(result, overrides=used) if used and not result.overrides else result
    return result.frames() if frames else result


def _other_kind(found: Any, expected: str) -> str:
    """Why a config of another kind is refused by the verb that runs ``expected``."""
    if not isinstance(found, str):
        return f"expected kind: {expected}, got {shown(found)}"
    return (
        f"this is a kind: {found if len(found) <= 40 else shown(found)} config, not kind: "
        f"{expected}; run it with "
        f"wgpsim run (wgpsim search takes kind: {expected})"
    )


def _overrides_used(
    raw: Mapping[str, Any], overrides: Sequence[str] | Mapping[str, Any] | None, hw_path: Any
) -> tuple[str, ...]:
    """The changes a run made to its files: ``--hw``, the ``--set`` items (hardware ones as the
    ``hardware_overrides`` they became) and the config's own ``hardware_overrides``."""
    used = [f"hw={Path(hw_path).name}"] if hw_path is not None else []
    if isinstance(overrides, Mapping):
        items = [f"{k}={v}" for k, v in overrides.items()]
    else:
        items = [str(i) for i in overrides or ()]
    used += [i for i in items if not i.split("=", 1)[0].strip().startswith("hardware_overrides")]
    hardware = raw.get("hardware_overrides")
    if isinstance(hardware, Mapping):
        used += [f"{k}={v}" for k, v in flatten(hardware)]
    return tuple(dict.fromkeys(used))


def _execution(
    section: Any, source: ConfigSource, workers: int | None, scheduler: str | None
) -> Execution:
    """The config's ``execution`` section, validated, with the explicit arguments on top."""
    if section is not None and not isinstance(section, Mapping):
        raise source.error("execution", f"expected a mapping, got {shown(section)}")
    if section is not None and "scheduler" in section:
        raise source.error(
            "execution.scheduler",
            "a config file cannot name a Dask scheduler (connecting to one trusts it: it runs "
            f"code in this process); give --scheduler ADDR or set {SCHEDULER_ENV}=ADDR instead",
        )
    fields = check_fields(section or {}, EXECUTION_FIELDS, source, prefix="execution.")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers {workers}: must be >= 1 (leave it out for every core)")
    return Execution(
        workers=workers if workers is not None else fields["workers"],
        scheduler=scheduler,
    )


def _runner_for(kind: Any, source: ConfigSource) -> Runner:
    if kind is not None and not isinstance(kind, str):
        raise source.error("kind", f"expected a kind name (a string), got {shown(kind)}")
    # Import only the module of this kind (start-up time).
    if isinstance(kind, str) and kind in KIND_MODULES:
        importlib.import_module(KIND_MODULES[kind])
    if kind in _KINDS:
        return _KINDS[kind]
    known = kinds()
    if kind is None:
        raise source.error("kind", f"missing; expected one of {', '.join(known)}")
    if kind not in _KINDS:
        guess = closest(str(kind), known)
        hint = f"did you mean '{guess}'?" if guess else f"expected one of {', '.join(known)}"
        raise source.error("kind", f"unknown kind '{kind}'; {hint}")
    return _KINDS[kind]


__all__ = ["Execution", "ExperimentResult", "kinds", "register_kind", "run_experiment"]
