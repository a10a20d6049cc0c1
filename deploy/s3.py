#!/usr/bin/env python3
"""Uploads a dossier build/ to S3 so CloudFront can serve it unchanged.

Every object is uploaded at its URL path (S3 keys are not directories, so both
protected-resource documents fit) with the Content-Type and Cache-Control the manifest
records; extensionless documents would otherwise be stored as binary/octet-stream. Extra
headers such as Link cannot be S3 metadata: set them with a CloudFront response-headers
policy (see the README). Needs the AWS CLI; --dry-run prints the commands instead.

Usage: s3.py BUILD_DIR s3://BUCKET[/PREFIX] [--dry-run]
"""

import json
import os
import shlex
import subprocess
import sys


def commands(build_dir, target):
    with open(os.path.join(build_dir, "manifest.json")) as f:
        manifest = json.load(f)
    target = target.rstrip("/")
    for path, entry in sorted(manifest["artifacts"].items()):
        key = "index.html" if path == "/" else path.lstrip("/")
        yield [
            "aws", "s3", "cp",
            os.path.join(build_dir, entry["file"]),
            f"{target}/{key}",
            "--content-type", entry["content_type"],
            "--cache-control", entry["cache_control"],
        ]


def main():
    arguments = [a for a in sys.argv[1:] if a != "--dry-run"]
    dry_run = "--dry-run" in sys.argv
    if len(arguments) != 2 or not arguments[1].startswith("s3://"):
        sys.exit(__doc__)
    build_dir, target = arguments
    if not os.path.exists(os.path.join(build_dir, "manifest.json")):
        sys.exit(f"{build_dir} has no manifest.json: run `dossier build` first")
    for command in commands(build_dir, target):
        if dry_run:
            print(shlex.join(command))
        else:
            subprocess.run(command, check=True)


if __name__ == "__main__":
    main()
