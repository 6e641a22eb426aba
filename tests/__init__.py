"""The test suite (a package, so that pytest names its modules tests.<folder>.<module>)."""
