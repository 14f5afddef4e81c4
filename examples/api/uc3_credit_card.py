"""UC3 of SPAseq through the Python API: on one card, a transaction, a bigger one, then one
at most a tenth of it (examples/uc3-credit-card), over a stream file in SPAseq's own
credit-card format (N-Triples cut into events by a stream description).

SPAseq's card10k is not in the repository (no licence to copy it), so this script writes a
stream like it with :mod:`rsep.workloads` (seeded; cards named under
``http://example/synthetic/card#``); examples/uc3-credit-card/README.md runs the real one.
Run from the repository's root: ``python examples/api/uc3_credit_card.py``. Notebook-style:
each ``# %%`` is a cell.
"""

# %% The query: SEQ (A, B, C) within 100 seconds, partitioned by card
import shutil
import tempfile
from pathlib import Path

import pandas as pd

import rsep
from rsep.workloads import write_card_stream

query = rsep.Query.read(Path("examples/uc3-credit-card/big-after-small.spaseq"))
print(query.explain().split("parameters")[0])

# %% 2,000 generated transactions: two triples each, transaction k at k seconds
folder = Path(tempfile.mkdtemp(prefix="rsep-uc3-"))
TRANSACTIONS, SEED = 2000, 3
description = write_card_stream(folder, TRANSACTIONS, seed=SEED)
print(description.read_text(encoding="utf-8").strip())  # <stream> <./data.nt> 2

# %% Run it on the engine in this process and on the oracle: the same answers
found, oracle = (query.run(description, engine=e).to_pandas() for e in ("local", "reference"))
in_order = [frame.sort_values(list(frame.columns), ignore_index=True) for frame in (found, oracle)]
pd.testing.assert_frame_equal(*in_order)  # the same answers (a bag per instant)

# %% The suspicious cards: the three transactions of each match
found["card"] = found["card"].str.extract(r"#(\d+)>$", expand=False)
for column in ("amount1", "amount2", "amount3"):
    found[column] = found[column].str.extract(r'^"([^"]*)"', expand=False).astype(float)
found["first"] = found["interval_start"] // 1000
found["last"] = found["interval_end"] // 1000
print(found[["card", "first", "last", "amount1", "amount2", "amount3"]].to_string(index=False))
print(f"{len(found)} matches in {TRANSACTIONS:,} transactions")
shutil.rmtree(folder)  # the generated stream is not kept
