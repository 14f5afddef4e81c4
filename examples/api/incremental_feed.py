"""A SPAseq query embedded in an application through the Python API: events arrive one at a
time (here from a generator standing in for a message queue), the application pushes them,
advances the watermark as time passes and reads each answer as soon as it is final; the
answers equal those of one call over all the events, and the oracle's.

Run from the repository's root: ``python examples/api/incremental_feed.py``.
Notebook-style: each ``# %%`` is a cell.
"""

# %% The query: a price, then the same company's next lower price within 10 seconds
import random
from collections.abc import Iterator

from pyoxigraph import Literal, NamedNode, Triple

import rsep

EX = "http://example.org/"
query = rsep.Query(
    f"""PREFIX ex: <{EX}>
SELECT ?c ?p1 ?p2
WITHIN 10 SECONDS
PARTITION BY ?c
FROM STREAM S1 <{EX}S>
WHERE SEQ (A, B)
{{
  DEFINE GPM A ON S1 {{ ?c ex:price ?p1 . }}
  DEFINE GPM B ON S1 {{ ?c ex:price ?p2 . FILTER (?p2 < ?p1) }}
}}
"""
)
INTEGER = NamedNode("http://www.w3.org/2001/XMLSchema#integer")


def arrivals(count: int, seed: int = 7) -> Iterator[rsep.Event]:
    """Price events of three companies, one every 250 ms, as a feed would bring them."""
    chosen = random.Random(seed)
    for k in range(count):
        company = NamedNode(f"{EX}c{chosen.randrange(3)}")
        price = Literal(str(chosen.randrange(10, 20)), datatype=INTEGER)
        yield rsep.Event.point(EX + "S", 250 * k, [Triple(company, NamedNode(EX + "price"), price)])


# %% Push each event as it comes; every second, promise that no earlier event will come
running = query.incremental()
answers: list[rsep.Result] = []
for event in arrivals(400):
    answers += running.push([event])
    if event.t_end % 1000 == 0:
        answers += running.advance(event.t_end - 1)
answers += running.finish()
print(f"{running.events} events pushed, {len(answers)} answers as they became final")


# %% The same answers as one call, and as the oracle's
def canonical(results: list[rsep.Result]) -> list[str]:
    return sorted(str(sorted(r.to_json().items())) for r in results)


events = list(arrivals(400))
assert canonical(answers) == canonical(list(query.run(events)))
assert canonical(answers) == canonical(list(query.run(events, engine="reference")))
print(answers[0])
