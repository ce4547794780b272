"""Benchmarks. Each prints its figures and a ratio to a baseline measured in the same run."""
