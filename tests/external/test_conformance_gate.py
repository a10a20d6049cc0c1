"""The conformance gate itself: an allowed fixture failure passes, anything else fails."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GATE = os.path.join(ROOT, "conformance", "gate.py")
ALLOWLIST = os.path.join(ROOT, "conformance", "fixture-checks.txt")


def run_gate(tmp_path, checks):
    scenario = tmp_path / "server-stateless-x"
    scenario.mkdir()
    (scenario / "checks.json").write_text(json.dumps(checks))
    return subprocess.run([sys.executable, GATE, str(tmp_path), ALLOWLIST], capture_output=True, text=True)


def test_fixture_failures_are_allowed(tmp_path):
    result = run_gate(tmp_path, [
        {"id": "sep-2575-missing-capability-http-400", "status": "FAILURE"},
        {"id": "tools-list", "status": "SUCCESS"},
    ])
    assert result.returncode == 0, result.stdout
    assert "conformance: 1 passed, 0 failed" in result.stdout


def test_a_real_failure_inside_a_baselined_scenario_fails(tmp_path):
    result = run_gate(tmp_path, [
        {"id": "sep-2575-missing-capability-http-400", "status": "FAILURE"},
        {"id": "sep-2575-http-server-header-mismatch-400", "status": "FAILURE", "errorMessage": "got -32022"},
    ])
    assert result.returncode == 1
    assert "sep-2575-http-server-header-mismatch-400" in result.stdout


def test_no_results_is_a_failure(tmp_path):
    result = subprocess.run([sys.executable, GATE, str(tmp_path), ALLOWLIST], capture_output=True, text=True)
    assert result.returncode != 0
