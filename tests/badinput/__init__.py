"""Bad input: a test per row of the README's "Bad input" table, each a clear error or the right
answer, and no output left behind by a failed job."""
