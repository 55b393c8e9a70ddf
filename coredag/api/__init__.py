"""Jet's Processor API, the fast-path contract of standard processors, and the test harness."""
