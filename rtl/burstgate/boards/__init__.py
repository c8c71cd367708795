"""Board tops: the core with an on-chip traffic source and self-check, for a board on a desk."""
