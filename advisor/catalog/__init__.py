"""The GPU catalog: an SQLite database (SQLAlchemy 2.0 ORM) of cards, their figures and prices.

Use:
    catalog = open_catalog()                 # or open_catalog(path); messages tell what opening did
    with catalog.read() as session:
        cards = list_cards(session, vendor="NVIDIA", min_memory_bytes=24 * 2**30, sort_by="memory")
        price = latest_price(session, "4090", condition="used")
    catalog.transact(lambda s: add_price(s, "RTX 3090", 700.0, condition="used"))
Every function returns frozen records (records.py); nothing outside this package sees an ORM object.
"""

from advisor.catalog.database import ENV_VAR, Catalog, catalog_path, open_catalog
from advisor.catalog.errors import CatalogDataError, CatalogError, DuplicateCardError, UnknownCardError
from advisor.catalog.records import (
    CONDITIONS,
    LINK_KINDS,
    SEGMENTS,
    VENDORS,
    CardRecord,
    CardSpec,
    PriceRecord,
)
from advisor.catalog.repository import (
    SORT_KEYS,
    add_card,
    add_price,
    edit_card,
    find_card,
    import_cards,
    latest_price,
    list_cards,
    lookup_card,
    price_history,
)

__all__ = [
    "CONDITIONS",
    "ENV_VAR",
    "LINK_KINDS",
    "SEGMENTS",
    "SORT_KEYS",
    "VENDORS",
    "CardRecord",
    "CardSpec",
    "Catalog",
    "CatalogDataError",
    "CatalogError",
    "DuplicateCardError",
    "PriceRecord",
    "UnknownCardError",
    "add_card",
    "add_price",
    "catalog_path",
    "edit_card",
    "find_card",
    "import_cards",
    "latest_price",
    "list_cards",
    "lookup_card",
    "open_catalog",
    "price_history",
]
