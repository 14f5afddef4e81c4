"""``python -m rsep``: the ``rsep`` command (:func:`rsep.cli.main.entry`)."""

from rsep.cli.main import entry

if __name__ == "__main__":
    entry()
