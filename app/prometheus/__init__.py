"""The Prometheus adapter: the one place rightsizer talks to Prometheus (or Thanos, Mimir,
Cortex, VictoriaMetrics: the same HTTP API), as app.kube is for Kubernetes.

`client` queries `/api/v1/query_range` with the authentication, TLS and timeouts production
servers want, and builds the cAdvisor queries VPA's history provider makes; the recommender's
history replay (app.jobs.history) is its caller. An import-linter contract in setup.cfg keeps
every other part of the service from making HTTP calls of its own with `requests`.
"""
