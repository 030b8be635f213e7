"""wormhole_lab: packet-level simulation of LLM-training network traffic, accelerated as in Wormhole."""

__version__ = "0.5.0"  # memo DB entries of other versions are not trusted: bump when results change
