#!/usr/bin/env python3
"""tests.json from CTest's JUnit output: passed / failed / skipped per label and stage.

usage: ctest-results.py --out FILE --commit SHA --build-type TYPE
                        --stage NAME BUILD_TYPE JUNIT.xml TESTS.json [--stage ...]...
JUNIT.xml is `ctest --output-junit`; TESTS.json is `ctest --show-only=json-v1` of the same
build (CTest's JUnit carries no labels). A test counts as skipped when JUnit says notrun,
disabled or skipped; as failed when it has a <failure> or <error>. Written atomically.
"""
import argparse
import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ET


def labels_of(tests_json):
    with open(tests_json) as f:
        doc = json.load(f)
    out = {}
    for t in doc.get("tests", []):
        labels = []
        for p in t.get("properties", []):
            if p.get("name") == "LABELS":
                labels = list(p.get("value", []))
        out[t["name"]] = labels or ["(none)"]
    return out


def stage(name, junit, tests_json, build_type):
    labels = labels_of(tests_json)
    root = ET.parse(junit).getroot()
    per_label, totals, failed_tests = {}, {"passed": 0, "failed": 0, "skipped": 0}, []
    for case in root.iter("testcase"):
        status = case.get("status", "run")
        if case.find("failure") is not None or case.find("error") is not None:
            result = "failed"
            failed_tests.append(case.get("name"))
        elif status in ("notrun", "disabled") or case.find("skipped") is not None:
            result = "skipped"
        else:
            result = "passed"
        totals[result] += 1
        for label in labels.get(case.get("name"), ["(none)"]):
            per_label.setdefault(label, {"passed": 0, "failed": 0, "skipped": 0})[result] += 1
    return {"name": name, "build_type": build_type, "totals": totals,
            "labels": dict(sorted(per_label.items())), "failed_tests": failed_tests}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--build-type", required=True)
    ap.add_argument("--stage", nargs=4, action="append", required=True,
                    metavar=("NAME", "BUILD_TYPE", "JUNIT", "TESTS"))
    a = ap.parse_args()
    stages = []
    for name, build_type, junit, tests in a.stage:
        try:
            stages.append(stage(name, junit, tests, build_type))
        except (OSError, ET.ParseError, json.JSONDecodeError, KeyError) as e:
            print(f"error: stage {name}: {e}", file=sys.stderr)
            return 2
    totals = {k: sum(s["totals"][k] for s in stages) for k in ("passed", "failed", "skipped")}
    doc = {"format_version": 1, "commit": a.commit, "build_type": a.build_type,
           "source": "ctest --output-junit", "totals": totals, "stages": stages}
    d = os.path.dirname(os.path.abspath(a.out))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tests.json.")
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
