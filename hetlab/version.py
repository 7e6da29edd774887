"""hetlab's version, in a module of its own so that any layer may read it (the profile cache
keys on it) without importing the package face, which names the top layers."""

__version__ = "0.1.0"
