"""Library of the HIL network performance suite: the scenario families and their contract, the DUT
session, the far end, traffic and tools, the bench PC's plumbing, results and report
(docs/architecture.md). Comments cite the documents the scenarios come from as "seed 000" ...
"seed 004" and "the thesis" (seed 004), "the lwIP study" (001), "the WLAN study" (003): each is
named, with its authors and what is taken from it, in docs/references.md."""
