"""Water-level placement: where a new pod should go by what nodes really use (docs/placement.md).

Pure math, no I/O: node levels over windows (`windows`), the score of a level against the
cluster's ideal (`score`), a pod's predicted usage (`pod_level`), pods bound since their node's
last metrics (`hotspots`), and the table the scheduler extender answers from (`table`).
"""
