"""Benchmarks: dataset loader, protocol, scorer and metrics, one package each."""
