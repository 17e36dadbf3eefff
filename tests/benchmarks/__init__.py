"""Benchmarks, run as scripts (README, Development); a package so that one can use another."""
