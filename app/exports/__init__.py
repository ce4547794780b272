"""How the app's data leaves it: the annotation record declared once, and its writers."""
