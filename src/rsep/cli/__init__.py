"""The ``rsep`` command: thin argument parsing over the layers below."""
