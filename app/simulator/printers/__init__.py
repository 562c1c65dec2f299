"""Server-side printing: the meta.k8s.io Tables `kubectl get` asks for, and the metadata-only
conversions, as kube-apiserver and metrics-server produce them.

- `negotiation`: the Accept header and the Table options of the query;
- `table`: objects and lists converted (Table, PartialObjectMetadata(List));
- `registry` and one module per API group (`core`, `apps`, `batch`, `autoscaling`, `policy`,
  `coordination`, `admissionregistration`, `metrics`): each kind's columns and cells;
- `common`, `duration`: shared columns and cell formats, and `HumanDuration` ages.

Pure functions of the objects and the simulated time; `endpoints/tables.py` hooks them into
the API server.
"""
