"""burstgate gateware: the per-I/O datapath of the burstgate storage-agent offload.

Subpackages and modules:

* :mod:`burstgate.regmap` — the single register-map source (generates the CSR blocks,
  the C header used by ``fw/`` and ``sw/``, and ``docs/registers.md``).
* :mod:`burstgate.csr` — the register bus and the CSR block built from the map.
* :mod:`burstgate.layouts` — descriptor and cost-vector payload layouts.
* :mod:`burstgate.cost` — the vectorized I/O cost estimator.
* :mod:`burstgate.testing` — stream helpers for ``amaranth.sim`` testbenches.
"""
