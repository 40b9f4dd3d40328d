"""A separate process that writes to a catalog, for the reliability tests (run as a script).

python writer.py DB increment N   # N read-modify-write increments of the card "Counter" plus a price each
python writer.py DB prices N      # N prices 1..N on "Counter", printing each amount once committed
"""

from __future__ import annotations

import sys
import time
from functools import partial

from sqlalchemy.orm import Session

from advisor.catalog import add_price, edit_card, find_card, open_catalog


def increment(session: Session) -> None:
    current = find_card(session, "Counter").tdp_w
    time.sleep(0.002)  # widen the read-to-write window: without the write lock two processes would collide
    edit_card(session, "Counter", tdp_w=current + 1)
    add_price(session, "Counter", 1.0)


def main(path: str, mode: str, count: int) -> None:
    catalog = open_catalog(path)  # a file path or a server URL
    for i in range(1, count + 1):
        if mode == "increment":
            catalog.transact(increment)
        else:
            catalog.transact(partial(add_price, card_name="Counter", amount=float(i)))
            print(i, flush=True)  # only after the commit returned


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
