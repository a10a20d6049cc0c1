"""The benchmark helpers are safe to point at the wrong directory: gen_content.py never
replaces a directory it did not write."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(ROOT, "benches", "gen_content.py")


def gen(*args):
    return subprocess.run([sys.executable, GEN, *args], capture_output=True, text=True)


def test_gen_content_refuses_a_directory_it_did_not_write(tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    result = gen(str(precious), "--pages", "2")
    assert result.returncode != 0
    assert "was not written by gen_content.py" in result.stderr
    assert (precious / "thesis.tex").read_text() == "years of work"
    assert os.listdir(precious) == ["thesis.tex"]


def test_gen_content_writes_and_rewrites_its_own_tree(tmp_path):
    out = tmp_path / "big"
    assert gen(str(out), "--pages", "3").returncode == 0
    assert len([p for p in os.listdir(out / "pages") if p.startswith("generated-")]) == 3
    assert gen(str(out), "--pages", "5").returncode == 0
    assert len([p for p in os.listdir(out / "pages") if p.startswith("generated-")]) == 5
    assert gen(str(out), "--pages", "-1").returncode == 2
