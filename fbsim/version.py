"""The package version, written into every output's provenance."""

__version__ = "0.1.0"
