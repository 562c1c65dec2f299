"""All Kubernetes I/O. The only package that imports `kubernetes` (import-linter checks it)."""
