"""A simulated Kubernetes cluster: a real-shaped API server with controllers and a usage model.

rightsizer reaches it only through the kubeconfig it writes, exactly as it reaches a real cluster.
It is an optional part of rightsizer (the `simulator` extra; not in the image): nothing of the
service imports it (lint-imports: serve-never-reaches-simulator); `rightsizer sim` and `rightsizer
demo` load it by name when they run (app.cli.simulated).
"""
