"""Placeholder: filled in by the rounds work."""
