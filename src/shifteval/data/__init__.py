"""Data shipped with the package: the papers' published tables, released predictions, download sources."""
