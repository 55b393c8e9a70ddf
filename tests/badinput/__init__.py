"""Bad input: a test per row of the "Bad input" table in docs/guide/errors.md, each a clear error or the right
answer, and no output left behind by a failed job."""
