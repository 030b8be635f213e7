"""Topologies: the array model, builders, HPCC/SimAI file I/O, validation and ECMP routing."""

from wormhole_lab.topology.builders import (
    DEFAULT_DELAY_PS,
    DEFAULT_RATE_BPS,
    dumbbell,
    fat_tree,
    leaf_spine,
    rail_optimized,
    star,
)
from wormhole_lab.topology.hpcc_format import read_topology, write_topology
from wormhole_lab.topology.model import Topology
from wormhole_lab.topology.routing import HOST_HASH_SEED, Paths, Routes, host_ip, murmur3_32
from wormhole_lab.topology.validate import check_topology

__all__ = [
    "DEFAULT_DELAY_PS",
    "DEFAULT_RATE_BPS",
    "HOST_HASH_SEED",
    "Paths",
    "Routes",
    "Topology",
    "check_topology",
    "dumbbell",
    "fat_tree",
    "host_ip",
    "leaf_spine",
    "murmur3_32",
    "rail_optimized",
    "read_topology",
    "star",
    "write_topology",
]
