"""The pipeline on Spark: sessions, conversion jobs, the columnar event store."""
