"""Plumbing shared by the library and the book: atomic I/O and the torchvision compatibility shim."""
