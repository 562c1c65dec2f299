"""The running cluster: cluster state and the kubelets (cluster.py), the controllers and the
scheduler; clients of the rules in `apiserver`, driven by the clock in `workload`."""
