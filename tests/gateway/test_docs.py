"""`make docs`: every relative link and anchor in the Markdown pages resolves."""

from __future__ import annotations

from gateway import doccheck


def test_every_documentation_link_and_anchor_resolves():
    problems = [p for page in doccheck.pages() for p in doccheck.check(page)]
    assert problems == []


def test_the_checker_catches_a_broken_anchor(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n## Real heading\n\n[ok](#real-heading) [bad](#nowhere) [gone](missing.md)\n"
    )
    monkeypatch.setattr(doccheck, "ROOT", tmp_path)
    problems = doccheck.check(page)
    assert len(problems) == 2
    assert any("#nowhere" in p for p in problems)
    assert any("missing.md" in p for p in problems)
