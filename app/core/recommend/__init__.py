"""Recommender math (VPA recommender): histograms, aggregation, estimator, capping, usage model."""
