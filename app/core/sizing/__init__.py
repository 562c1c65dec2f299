"""Sizing a pod within what kube-apiserver accepts, and choosing which running pods to update."""
