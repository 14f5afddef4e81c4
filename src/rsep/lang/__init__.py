"""Query languages: the SPARQL 1.1 grammar, its dialect extensions, parsers and checks."""
