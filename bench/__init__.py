"""`make bench`: speed figures, each as a ratio against a reference measured in the same run."""
