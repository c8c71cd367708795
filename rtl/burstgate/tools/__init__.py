"""Host-side Python tools of burstgate (plots of burstgate-sim reports)."""
