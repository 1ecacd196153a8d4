"""Getting data in and looking at it: CSV loading, bundled data sets, binning, profiles."""
