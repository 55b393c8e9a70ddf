"""The Core DAG's model: vertices, edges, routing, partitioners, aggregate operations, pictures."""
