#!/usr/bin/env python3
"""Writes a large content tree for benchmarks: the sample company plus N generated pages
spread over its divisions. Usage: gen_content.py OUT_DIR [PAGES]"""

import os
import random
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ("sensor calibration river station telemetry archive network flood rainfall nitrate "
         "turbidity field service laboratory accredited platform regional utility operator "
         "quality report maintenance deployment battery solar antenna firmware dashboard").split()


def paragraph(rng, words):
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def main():
    out, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "content"), out)
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


if __name__ == "__main__":
    main()
