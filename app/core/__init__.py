"""Web infrastructure every feature shares: the extensions, the error envelope, persistence
helpers, security headers and rate limits, the interface language, request guards, the
shared command-line helpers. Nothing here knows a feature (docs/architecture.md).
"""
