"""The JSON and YAML documents users write, parsed and validated in one place for every way they
arrive (REST, CLI files, database rows), and the imports from the tools rightsizer replaces:

- policy: a policy document <-> core Policy, every bad field named at once
- scaler: a proportional scaler document, checked with the scaler job's own parsers
- vpa: VerticalPodAutoscaler objects -> policy documents
- cpa: a cluster-proportional-autoscaler ConfigMap -> a scaler document

Pure: these modules import only app.core (no Flask, database or Kubernetes client), so the API,
the CLI and the jobs can all use them (setup.cfg's "documents are pure" contract).
"""
