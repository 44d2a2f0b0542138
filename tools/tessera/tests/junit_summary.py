#!/usr/bin/env python3
"""Reads a JUnit XML file with Python's xml.etree (expat, a conforming XML
parser: a file that is not well-formed is an error, exit 1) and prints a JSON
summary for the tests of `tessera conformance --junit`:

  {"tag": root tag, "attrib": {...},
   "suites": [{"tag", "attrib", "properties": {name: value},
               "counted": {"tests", "failures", "errors", "skipped"},
               "unknown": [child tags that JUnit does not have]}],
   "cases": [{"suite": suite name, "attrib": {...}, "outcome": "pass" |
              "failure" | "error" | "skipped", "results": number of result
              elements, "message", "type", "text"}]}

The counts are of the elements found, so a test compares them with the
attributes the writer put on each <testsuite>.

Usage: junit_summary.py FILE
"""
import json
import sys
import xml.etree.ElementTree as ET

RESULT_COUNTS = {"failure": "failures", "error": "errors", "skipped": "skipped"}


def summarize(root):
    out = {"tag": root.tag, "attrib": dict(root.attrib), "suites": [], "cases": []}
    for suite in root:
        summary = {
            "tag": suite.tag,
            "attrib": dict(suite.attrib),
            "properties": {},
            "counted": {"tests": 0, "failures": 0, "errors": 0, "skipped": 0},
            "unknown": [],
        }
        for child in suite:
            if child.tag == "properties":
                for prop in child:
                    summary["properties"][prop.get("name")] = prop.get("value")
            elif child.tag == "testcase":
                case = {"suite": suite.get("name"), "attrib": dict(child.attrib),
                        "outcome": "pass", "results": 0}
                summary["counted"]["tests"] += 1
                for result in child:
                    if result.tag not in RESULT_COUNTS:
                        summary["unknown"].append(result.tag)
                        continue
                    summary["counted"][RESULT_COUNTS[result.tag]] += 1
                    case.update(outcome=result.tag, message=result.get("message"),
                                type=result.get("type"), text=result.text or "")
                    case["results"] += 1
                out["cases"].append(case)
            else:
                summary["unknown"].append(child.tag)
        out["suites"].append(summary)
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        root = ET.parse(argv[1]).getroot()
    except (ET.ParseError, OSError) as error:
        print(f"{argv[1]}: not well-formed XML: {error}", file=sys.stderr)
        return 1
    json.dump(summarize(root), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
