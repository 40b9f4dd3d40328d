"""Which variant a short name picked: "H100" is the H100 SXM5 (an alias of it), but the H100 PCIe and H100 NVL
answer to the same words. A lookup that lands on one of several such cards says so, and how to pick another,
instead of choosing silently (issue 28)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from advisor.catalog.names import normalize, tokens
from advisor.catalog.orm import Alias, Card
from advisor.catalog.repository import resolve_card

MAX_LISTED = 4


def variant_note(session: Session, name: str) -> str | None:
    """None when `name` is the card's canonical name or fits no other card; else one line naming the card it
    means and the other cards whose names contain all of its words ("H100" -> H100 PCIe, H100 NVL)."""
    card = resolve_card(session, name)
    wanted = tokens(name)
    if card is None or normalize(name) == normalize(card.name) or not wanted:
        return None
    pairs = session.execute(select(Alias.display, Card.name).join(Card))
    others = sorted({owner for display, owner in pairs if owner != card.name and wanted <= tokens(display)})
    if not others:
        return None
    shown = ", ".join(f"'{o}'" for o in others[:MAX_LISTED])
    more = f" and {len(others) - MAX_LISTED} more" if len(others) > MAX_LISTED else ""
    return f"'{name}' is taken to mean {card.name}; for another variant give its name: {shown}{more}"
