"""Background jobs (recommender, updater, scaler) and the runner that starts them on the leader."""
