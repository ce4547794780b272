"""Placeholder: filled in by the exports work."""
