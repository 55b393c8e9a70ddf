"""The built-in processors the planner emits: sources, stateless stages, aggregations, joins, sinks."""
