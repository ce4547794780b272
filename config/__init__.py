"""Configuration package: settings classes (settings.py) and taxonomy files."""
