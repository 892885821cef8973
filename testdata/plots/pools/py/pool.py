"""Python pool of the `plots` program (see ../../README.md): the measured
samples, as resources (the template samples://{sample}) and as the
completions of a sample's name.
"""

import csv
import os

import nexus

SAMPLES = os.path.join("data", "samples")  # the pool runs in the program's directory


def _names():
    return sorted(f[:-4] for f in os.listdir(SAMPLES) if f.endswith(".csv"))


def sample_values(sample):
    """The measurements of one sample, in the order they were taken."""
    if sample not in _names():
        raise ValueError("no sample named %r (the samples: %s)" % (sample, ", ".join(_names())))
    with open(os.path.join(SAMPLES, sample + ".csv"), newline="") as f:
        return [float(row["value"]) for row in csv.DictReader(f)]


def sample_names(prefix):
    """The names of the samples starting with prefix: completions."""
    return [n for n in _names() if n.startswith(prefix)]


if __name__ == "__main__":
    nexus.serve({1: sample_values, 2: sample_names})
