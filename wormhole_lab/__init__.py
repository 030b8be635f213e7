"""wormhole_lab: packet-level simulation of LLM-training network traffic, accelerated as in Wormhole."""

__version__ = "0.2.0"
