"""Validator pages and API."""
