"""Planted attention checks: known errors written into a copy of a real document."""
