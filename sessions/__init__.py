"""Persistence (SQLite) and configuration."""
