"""The configuration layer, below everything else of hil: the sections DUT kinds share
(sections), threshold profiles (thresholds) and one-line errors for configuration files (errors).
The bench file itself, whose DUT entries are the kinds' sections, is hil.dut.bench_file."""
