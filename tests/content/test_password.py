"""`make password` (python -m content.password) against the gateway's database."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from tests.content.factories import PASSWORD

ROOT = Path(__file__).resolve().parents[2]


def _run(
    database_url: str, tmp_path: Path, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("APP_ENV", "NODE_ENV")}
    env.update(
        {
            "DATABASE_URL": database_url,
            "APP_ENV": "test",
            "SECRET": "s" * 40,
            "DATA_DIR": str(tmp_path),
        }
    )
    return subprocess.run(
        [sys.executable, "-m", "content.password", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_lists_accounts_and_sets_a_password(cms, person, database_url, tmp_path):
    owner = await person("owner", email="boss@example.com")
    await person("viewer", email="v@example.com")
    listing = await asyncio.to_thread(_run, database_url, tmp_path)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].split() == ["EMAIL", "ROLE", "NAME"]
    assert any(line.split()[:2] == ["boss@example.com", "owner"] for line in lines)
    assert "password" not in listing.stdout.lower()

    done = await asyncio.to_thread(
        _run, database_url, tmp_path, "BOSS@example.com", stdin="a brand new secret\n"
    )
    assert done.returncode == 0, done.stderr
    assert "password set for boss@example.com" in done.stdout
    # The old session is over; the new password signs in, the old one does not.
    assert (await cms.get("/api/auth/me", headers=owner.headers)).status == 401
    ok = await cms.post(
        "/api/auth/login", json={"email": owner.email, "password": "a brand new secret"}
    )
    assert ok.status == 200
    old = await cms.post("/api/auth/login", json={"email": owner.email, "password": PASSWORD})
    assert old.status == 401


async def test_refuses_unknown_accounts_and_short_passwords(person, database_url, tmp_path):
    await person("owner", email="boss@example.com")
    unknown = await asyncio.to_thread(
        _run, database_url, tmp_path, "who@example.com", stdin="long enough pw\n"
    )
    assert unknown.returncode == 1 and "no account who@example.com" in unknown.stderr
    short = await asyncio.to_thread(
        _run, database_url, tmp_path, "boss@example.com", stdin="short\n"
    )
    assert short.returncode == 1 and "at least 8" in short.stderr
