"""The RDF stream data model: terms, values, events, streams, formats and converters."""
