#!/usr/bin/env python3
"""Writes a large content tree for benchmarks: the sample company plus N generated pages
spread over its divisions.

Usage: gen_content.py OUT_DIR [--pages N]

OUT_DIR must not exist, or be a tree this script wrote before (it leaves a marker file in
it): it never replaces a directory it did not create.
"""

import argparse
import os
import random
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ("sensor calibration river station telemetry archive network flood rainfall nitrate "
         "turbidity field service laboratory accredited platform regional utility operator "
         "quality report maintenance deployment battery solar antenna firmware dashboard").split()
# Left in every tree written here; only a directory holding it may be replaced.
MARKER = ".generated-by-gen-content"


def paragraph(rng, words):
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def generate(out, count):
    """Writes the tree to `out`. Raises SystemExit if `out` exists and is not ours."""
    out = os.path.abspath(out)
    if os.path.lexists(out):
        if not os.path.isdir(out) or os.path.islink(out) or not os.path.isfile(os.path.join(out, MARKER)):
            raise SystemExit(f"{out} exists and was not written by gen_content.py; "
                             "choose a new directory (nothing was changed)")
        shutil.rmtree(out)
    shutil.copytree(os.path.join(ROOT, "content"), out)
    with open(os.path.join(out, MARKER), "w") as f:
        f.write(f"{count} generated pages\n")
    divisions = sorted(f[:-5] for f in os.listdir(os.path.join(out, "divisions")))
    rng = random.Random(42)
    for i in range(count):
        with open(os.path.join(out, "pages", f"generated-{i:05d}.md"), "w") as f:
            f.write("+++\n")
            f.write(f'title = "Station report {i}"\n')
            f.write(f'summary = "{paragraph(rng, 12)}"\n')
            f.write(f'division = "{divisions[i % len(divisions)]}"\n')
            f.write(f"order = {100 + i}\n")
            f.write("+++\n\n")
            f.write(f"# Station report {i}\n\n")
            for _ in range(4):
                f.write(paragraph(rng, 40) + "\n\n")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", metavar="OUT_DIR", help="a new directory (or one written here before)")
    parser.add_argument("--pages", type=int, default=10_000, help="generated pages (default 10,000)")
    args = parser.parse_args(argv)
    if args.pages < 0:
        parser.error("--pages must be 0 or more")
    generate(args.out, args.pages)


if __name__ == "__main__":
    main(sys.argv[1:])
