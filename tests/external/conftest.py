"""Starts the real `dossier` binary for checks made with tools written by others."""

import contextlib
import os
import subprocess
import tempfile
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def dossier_binary():
    return os.environ.get("DOSSIER_BIN", os.path.join(ROOT, "target", "debug", "dossier"))


class Server:
    def __init__(self, base):
        self.base = base

    def get(self, path, headers=None):
        request = urllib.request.Request(self.base + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()


@contextlib.contextmanager
def running_server():
    """A fresh server with its own state (and so its own rate limits)."""
    state = tempfile.mkdtemp(prefix="dossier-state-")
    process = subprocess.Popen(
        [dossier_binary(), "serve", "--addr", "127.0.0.1:0",
         "--content", os.path.join(ROOT, "content"), "--state", state],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline().strip()
    prefix = "dossier listening on "
    assert line.startswith(prefix), f"unexpected first line: {line!r}"
    try:
        yield Server(line[len(prefix):])
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def server():
    with running_server() as server:
        yield server
