"""Assemble the coding tools of checkpoint 08 into the tool definitions one agent run is given."""

from __future__ import annotations

__all__: list[str] = []
