"""The commands that need the core alone, one module each: ``cribenv score`` and ``cribenv
discard``. The others live with the layer whose work they do (:data:`cribenv.cli.COMMANDS`)."""
