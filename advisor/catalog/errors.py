"""Catalog errors the user can act on; each prints as one line (see advisor/cli.py)."""

from __future__ import annotations

from collections.abc import Sequence

from advisor.core.errors import AdvisorError

SHOWN_PROBLEMS = 10


class CatalogError(AdvisorError):
    """Something about the catalog the user asked for that cannot be done."""


class UnknownCardError(CatalogError):
    def __init__(self, name: str, suggestions: Sequence[str] = ()) -> None:
        hint = f" (did you mean {', '.join(repr(s) for s in suggestions)}?)" if suggestions else ""
        super().__init__(f"unknown card {name!r}{hint}")
        self.name = name
        self.suggestions = tuple(suggestions)


class AmbiguousCardError(CatalogError):
    MAX_LISTED = 8

    def __init__(self, name: str, candidates: Sequence[str]) -> None:
        shown = ", ".join(repr(c) for c in candidates[: self.MAX_LISTED])
        more = f" and {len(candidates) - self.MAX_LISTED} more" if len(candidates) > self.MAX_LISTED else ""
        super().__init__(f"card name {name!r} is ambiguous: it could be {shown}{more}; type more of the name")
        self.name = name
        self.candidates = tuple(candidates)


class DuplicateCardError(CatalogError):
    def __init__(self, name: str, existing: str) -> None:
        super().__init__(f"card {name!r} is already in the catalog as {existing!r}")
        self.name = name


class CatalogDataError(CatalogError):
    """A CSV file (bundled or imported) with bad rows. Lists every bad row with its line number."""

    def __init__(self, where: str, problems: Sequence[str]) -> None:
        count = f"{len(problems)} bad row{'s' if len(problems) != 1 else ''}"
        # The line names the first few only: 100,000 bad rows made a 6.6 MB error line. `problems` has all.
        shown = " | ".join(problems[:SHOWN_PROBLEMS])
        more = f" | ... and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
        super().__init__(f"{where}: {count}, nothing imported: {shown}{more}")
        self.where = where
        self.problems = tuple(problems)


class NewerSchemaError(CatalogError):
    def __init__(self, path: str, found: int, known: int) -> None:
        super().__init__(
            f"{path}: catalog schema version {found} is newer than this advisor knows "
            f"({known}); update advisor or use --catalog to open another file"
        )


class PriceImportError(CatalogDataError):
    """Bad rows of a prices file: one line per bad row (line number and field), at most MAX_LISTED of them."""

    MAX_LISTED = 20

    def __init__(self, where: str, problems: Sequence[str]) -> None:
        super().__init__(where, problems)
        listed = [f"  {p}" for p in problems[: self.MAX_LISTED]]
        if len(problems) > self.MAX_LISTED:
            listed.append(f"  ... and {len(problems) - self.MAX_LISTED} more bad rows")
        count = f"{len(problems)} bad row{'s' if len(problems) != 1 else ''}"
        self.args = (f"{where}: {count}, nothing imported:\n" + "\n".join(listed),)

    def __str__(self) -> str:
        return str(self.args[0])


class CatalogBusyError(CatalogError):
    """Another program held the catalog's lock past the busy timeout; the file itself is fine."""

    def __init__(self, where: str, waited_s: float) -> None:
        super().__init__(
            f"catalog {where} is busy: another program kept it locked while advisor waited "
            f"{waited_s:.1f} s; nothing was changed, try again when it has finished"
        )
        self.where = where
        self.waited_s = waited_s


class CatalogFileError(CatalogError):
    """The catalog path cannot hold a database (a folder, a device, under a file, too long, read-only)."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"catalog {where}: {why}; point --catalog or ADVISOR_CATALOG at a writable file")


class ForeignFileError(CatalogError):
    """The catalog location holds something the catalog did not make (identity.py); it is left as it was."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(
            f"catalog {where}: {why}; nothing was changed; point --catalog or ADVISOR_CATALOG "
            "at an advisor catalog or a new file"
        )
