"""Debugging threads: repeated errors grouped (xN) and each error's story in one line."""
