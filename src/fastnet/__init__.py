"""fastnet: fast small feed-forward networks, measured honestly."""

__version__ = "0.1.0"
