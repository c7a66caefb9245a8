#!/usr/bin/env python3
"""Validate JSON Lines events against schema/events-v1.schema.json with the independent
`jsonschema` package (Draft 2020-12). Reads the files given (or stdin); exits 1 on the first
invalid line, naming it. Used by the Swift tests and runnable by hand:

    nearby-bridge demo --speed 0 | scripts/validate-events.py
"""
import json
import pathlib
import sys

import jsonschema

schema_path = pathlib.Path(__file__).resolve().parent.parent / "schema" / "events-v1.schema.json"
validator = jsonschema.Draft202012Validator(json.loads(schema_path.read_text()))
sources = [open(p, encoding="utf-8") for p in sys.argv[1:]] or [sys.stdin]
count = 0
for source in sources:
    for number, line in enumerate(source, 1):
        if not line.endswith("\n"):
            sys.exit(f"{source.name}:{number}: line is not newline-terminated (truncated?)")
        try:
            event = json.loads(line)
        except json.JSONDecodeError as error:
            sys.exit(f"{source.name}:{number}: not JSON: {error}")
        errors = sorted(validator.iter_errors(event), key=str)
        if errors:
            sys.exit(f"{source.name}:{number}: {errors[0].message} in {line.strip()}")
        count += 1
print(f"{count} events valid", file=sys.stderr)
