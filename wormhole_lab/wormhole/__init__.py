"""The Wormhole acceleration layer: port-level partitions, steady-state fast-forward, FCG memoization."""
