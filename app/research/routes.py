"""Researcher pages."""
