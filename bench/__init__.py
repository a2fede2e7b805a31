"""`make bench`: speed and memory figures, each a ratio against a reference measured in the same run
(`bench.catalogue`, run by `bench.harness`)."""
