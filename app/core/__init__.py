"""Pure recommender math: no I/O, no framework imports, explicit timestamps (unix seconds)."""
