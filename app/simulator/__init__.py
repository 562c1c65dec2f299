"""A simulated Kubernetes cluster: a real-shaped API server with controllers and a usage model.

rightsizer reaches it only through the kubeconfig it writes, exactly as it reaches a real cluster.
Nothing else in `app` imports this package except the `rightsizer sim` command registration.
"""
