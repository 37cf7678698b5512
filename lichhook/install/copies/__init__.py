"""The archive copies install runs from: the stable copy, the command line that reaches
it, the archive assembled from this Python's installed copy and the folders install made."""
