"""What a user would otherwise write to score typist records: polars to read the JSON
Lines, rapidfuzz's Indel distances, numpy multinomial repository weights for the
bootstrap. `typist bench score --reference` times it beside `typist score --json`.

usage: python benches/score_reference.py RECORDS.jsonl [RESAMPLES]
"""
import json
import sys

import numpy as np
import polars as pl
from rapidfuzz.distance import Indel
from rapidfuzz.process import cpdist

path = sys.argv[1]
resamples = int(sys.argv[2]) if len(sys.argv) > 2 else 1000

df = pl.read_ndjson(path).filter(pl.col("pass") == 1)
answered = df.filter(pl.col("outcome").is_in(["suggestion", "empty"]))
expected = answered["expected"].to_list()
predicted = answered["predicted"].fill_null("").to_list()
ld = cpdist(expected, predicted, scorer=Indel.distance, workers=-1)
ln = answered["expected"].str.len_chars().to_numpy().astype(np.float64)
empty = (answered["outcome"] == "empty").to_numpy()
gain = np.where(empty, 0.0, np.maximum(0.0, ln - ld))
c = np.divide(gain, ln, out=np.zeros_like(gain), where=ln > 0)
answered = answered.with_columns(
    pl.Series("len", ln), pl.Series("cube", ln * c**3), pl.Series("exact", np.where(c == 1.0, ln, 0.0))
)
repos = sorted(df["repo"].unique().to_list())
rng = np.random.default_rng(0)
weights = rng.multinomial(len(repos), [1.0 / len(repos)] * len(repos), size=resamples)
out = {}
for (name,), g in answered.group_by(["assistant"], maintain_order=True):
    per = g.group_by("repo").agg(pl.col("len").sum(), pl.col("cube").sum(), pl.col("exact").sum())
    per = pl.DataFrame({"repo": repos}).join(per, on="repo", how="left").fill_null(0.0)
    den = per["len"].to_numpy()
    cube = per["cube"].to_numpy()
    exact = per["exact"].to_numpy()
    ih = (weights @ cube) / (weights @ den)
    ex = (weights @ exact) / (weights @ den)
    out[name] = {
        "integral_help": cube.sum() / den.sum(),
        "integral_help_sd": float(ih.std(ddof=1)),
        "exact_share": exact.sum() / den.sum(),
        "exact_share_sd": float(ex.std(ddof=1)),
    }
print(json.dumps(out, sort_keys=True))
