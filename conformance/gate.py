#!/usr/bin/env python3
"""Reads every checks.json the conformance suite wrote and fails on any FAILURE whose check
id is not an allowed fixture check. Scenario baselines only say which scenarios may fail;
this says which checks may, so a real regression inside a baselined scenario still fails.

Usage: gate.py RESULTS_DIR ALLOWLIST
"""

import glob
import json
import os
import sys


def main():
    results, allowlist = sys.argv[1], sys.argv[2]
    allowed = {
        line.strip()
        for line in open(allowlist)
        if line.strip() and not line.startswith("#")
    }
    files = glob.glob(os.path.join(results, "**", "checks.json"), recursive=True)
    if not files:
        sys.exit(f"no checks.json under {results}: the suite did not run")
    passed = failed = allowed_failures = warnings = 0
    seen_wire_schema = False
    for path in sorted(files):
        scenario = os.path.basename(os.path.dirname(path))
        for check in json.load(open(path)):
            status = check.get("status")
            if check.get("id") == "wire-schema-valid":
                seen_wire_schema = True
            if status == "SUCCESS":
                passed += 1
            elif status == "FAILURE" and check.get("id") in allowed:
                allowed_failures += 1
            elif status == "FAILURE":
                failed += 1
                print(f"FAILED {scenario}: {check.get('id')}: {check.get('errorMessage')}")
            elif status == "WARNING":
                warnings += 1
                print(f"warning {scenario}: {check.get('id')}: {check.get('errorMessage')}")
    print(
        f"{len(files)} scenarios read; {allowed_failures} fixture-only failures allowed, "
        f"{warnings} warnings, wire schema checked: {seen_wire_schema}"
    )
    print(f"conformance: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
