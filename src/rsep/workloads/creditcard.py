"""Credit-card workloads: transactions in the form of SPAseq's credit-card stream
``card10k`` (SPAseq Sec. 8.1's CCD data set, UC3), generated at scale.

The sample (``creditcard/card10k.n3.xz``) is N-Triples, two triples per transaction and no
time; a SPAseq stream description (``<stream> <./data.nt> 2``) cuts it into events, event k
at k seconds (:mod:`rsep.rdf.formats.spaseq`). :func:`write_card_stream` writes the same
pair of files, so ``rsep run --stream DESCRIPTION.txt`` reads them unchanged.

Figures measured on the sample, which :func:`card_transactions` copies:

- 20,001 transactions of 212 cards (ids 2 to 213); ``<card#N> pred:id "N"^^xsd:string``
  and ``<card#N> pred:amount "x"^^xsd:double``;
- amounts uniform from 0.00 to 499.99 in cents (mean 249.91, standard deviation 144.11;
  a uniform law gives 250.00 and 144.34);
- a card's transactions come in bursts of consecutive events: 7,049 bursts of 1 to 9
  transactions (1: 1,131, 2: 1,934, 3: 1,957, 4: 1,317, 5: 531, 6: 108, 7: 10, 8: 59,
  9: 2; mean 2.84), the next burst from another card.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from rsep.rdf.terms import XSD_DOUBLE, XSD_STRING
from rsep.workloads.output import SYNTHETIC, check_count, write_lines

CARD_IDS = range(2, 214)
BURST_COUNTS = (1131, 1934, 1957, 1317, 531, 108, 10, 59, 2)
"""How many bursts of 1, 2, … 9 consecutive transactions of one card the sample has."""
MAX_CENTS = 49_999
STREAM = "http://example.org/main"
"""The stream IRI of SPAseq's credit-card description (queryCardFB.q)."""
CARD_NAMESPACE = f"http://example/{SYNTHETIC}/card#"
"""Generated cards are named here (the sample's are ``http://example/card#N``): every
event's subject says that it is synthetic, and queries bind the card to a variable."""


def card_transactions(n_events: int, seed: int = 0, cards: int = len(CARD_IDS)) -> Iterator[str]:
    """``n_events`` synthetic transactions, two N-Triples lines each (id, then amount),
    after one comment line saying the data are synthetic. Bursts of one card follow the
    sample's burst lengths, the card of each burst drawn uniformly among ``cards`` cards
    (never the previous one), amounts uniform in cents. Deterministic for ``seed``."""
    check_count(n_events)
    rng = random.Random(seed)
    ids = list(range(CARD_IDS.start, CARD_IDS.start + max(cards, 2)))
    yield f"# {SYNTHETIC} credit-card transactions (rsep.workloads.creditcard, seed {seed})\n"
    emitted, previous = 0, -1
    lengths = range(1, len(BURST_COUNTS) + 1)
    while True:
        card = rng.choice(ids)
        if card == previous:
            continue
        previous = card
        for _ in range(rng.choices(lengths, weights=BURST_COUNTS)[0]):
            amount = rng.randint(0, MAX_CENTS) / 100
            subject = f"<{CARD_NAMESPACE}{card}>"
            yield f'{subject} <http://example/id> "{card}"^^<{XSD_STRING}> .\n'
            yield f'{subject} <http://example/amount> "{amount}"^^<{XSD_DOUBLE}> .\n'
            emitted += 1
            if emitted == n_events:
                return


def write_card_stream(folder: Path, n_events: int, seed: int = 0) -> Path:
    """Write :func:`card_transactions` to ``folder/card_synthetic_seed<seed>_<n>.nt`` and
    the SPAseq stream description beside it (two triples per event); return the
    description, which ``rsep run --stream`` takes."""
    stem = f"card_{SYNTHETIC}_seed{seed}_{n_events}"
    data = write_lines(folder / f"{stem}.nt", card_transactions(n_events, seed))
    return write_lines(folder / f"{stem}.txt", [f"<{STREAM}> <./{data.name}> 2\n"])
