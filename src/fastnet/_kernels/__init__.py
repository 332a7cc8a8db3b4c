"""Private Cython kernels. Use the public API in :mod:`fastnet` instead.

Every kernel takes C-contiguous typed memoryviews that the Python side has
validated and allocated, runs without the GIL and returns an int status.
"""
