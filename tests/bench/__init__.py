"""Benchmarks: run by hand or `task bench`, never collected by pytest."""
