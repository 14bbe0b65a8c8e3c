"""bayesjudge: honest estimates of true quality from LLM-as-a-judge scores."""

from bayesjudge._version import __version__

__all__ = ["__version__"]
