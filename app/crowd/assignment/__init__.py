"""Study assignment: GET /start hands a worker the document that most needs annotators.

service.py decides which document (the quota, attention checks, the claim rule of
claims.py), routes.py serves /start (and the blueprint `bp`).
"""
