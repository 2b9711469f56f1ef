"""``Usage.to_dict`` is written out by hand (``asdict`` deep-copied it on every record): it must
keep every field, so a field added later cannot go missing from records."""

from __future__ import annotations

from dataclasses import asdict, fields

from toolscore.types import Usage


def test_usage_dict_has_every_field() -> None:
    usage = Usage(**{f.name: i + 1 for i, f in enumerate(fields(Usage))})
    assert usage.to_dict() == asdict(usage)
    assert Usage.from_dict(usage.to_dict()) == usage
