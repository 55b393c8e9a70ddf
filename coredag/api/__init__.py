"""The Processor API of seed 003, the fast-path contract of standard processors, and the test harness."""
