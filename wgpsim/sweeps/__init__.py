"""Running the points of a config, for every job: the executor (in process, a pool, Dask, a
checkpoint), experiment YAML and its validation, the ``drift:`` section, and what a kind is
(``ExperimentResult``, ``register_kind``).

See docs/DESIGN.md ("Sweeps", "The map") for what this floor holds and may import.
"""
