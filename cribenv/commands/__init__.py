"""Sub-commands of the ``cribenv`` command line (one module each)."""
