"""Benchmark: one updater run (dry run) from the caches against the simulator's scale mode.

The same benchmark as recommender_scale.py with --updater (recommendations must be written first,
so the recommender runs too), without the list-all-pods baseline unless asked for. The webhook
check is bypassed (`webhook_registered=lambda: True`); see recommender_scale.py.

    .venv/bin/python benchmarks/updater_scale.py [--nodes 5000 --pods 150000] [--min-lifetime 0]

Not run by the tests.
"""

from __future__ import annotations

import sys

from recommender_scale import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--baseline" in args:
        args.remove("--baseline")
    else:
        args.append("--no-baseline")
    sys.exit(main(["--updater", *args]))
