"""Which cluster to build: the scenario YAML format and the bundled default.yaml (scenario.py),
and scale mode's generated cluster (scale.py)."""
