"""Replica counts: cluster-proportional parameters and the scaler's behavior rules."""
