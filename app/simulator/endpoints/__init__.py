"""Everything served over HTTP: kube-apiserver's REST endpoints and subresources (scale, eviction,
resize), metrics.k8s.io, Prometheus's query_range and `/sim/...`, over a running cluster."""
