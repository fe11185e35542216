"""Index locators that are database URLs (`postgresql://…`), and never showing their password.

An index is a file path or a server URL. A URL may carry a password (`user:secret@host`,
`?password=`, `?sslpassword=`), so it never appears whole anywhere but the connect call:
`DatabaseUrl` prints as `redact_url` (password `***`), and `locator_key` is the passwordless form
that names a daemon's socket and is compared on its wire.

Which collections (vaults) of the database the locator means is its `collection` query parameter
(one name, several `a,b`, or `*` for all; docs/scale.md): noteseek reads it and removes it before
libpq sees the URL (`connect_url`), so the rest of the URL is plain libpq (sslmode, options, ...).

Pure string handling with no imports at all: the per-prompt hook's daemon client calls
`locator_key`, and importing even `re` or `urllib` there costs the hook milliseconds.
"""

from __future__ import annotations

__all__ = [
    "ALL_COLLECTIONS",
    "COLLECTION_PARAM",
    "DatabaseUrl",
    "collection_slug",
    "connect_url",
    "is_url",
    "locator_key",
    "redact_url",
    "url_collection",
    "with_collection",
]

COLLECTION_PARAM = "collection"
ALL_COLLECTIONS = "*"
# Query parameters whose value is a secret (libpq: the password, the client key's passphrase).
_SECRET_PARAMS = ("password", "sslpassword")
_SLUG_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"


def is_url(locator: str) -> bool:
    """Whether a locator is a URL (`scheme://…`, RFC 3986 scheme) rather than a file path."""
    scheme, sep, _ = locator.partition("://")
    # No regex: this runs in every one-shot process, where compiling one costs more than the test.
    return bool(sep and scheme[:1].isascii() and scheme[:1].isalpha()) and all(
        c.isascii() and (c.isalnum() or c in "+.-") for c in scheme
    )


def _split(url: str) -> tuple[str, str, str, list[str]]:
    """(scheme, userinfo, host and path, query items) of `scheme://userinfo@hosts/path?query`."""
    scheme, _, rest = url.strip().partition("://")
    head, _, query = rest.partition("?")
    netloc, slash, path = head.partition("/")
    userinfo, _, hosts = netloc.rpartition("@")
    return scheme, userinfo, hosts + slash + path, [q for q in query.split("&") if q]


def _join(scheme: str, userinfo: str, rest: str, query: list[str]) -> str:
    user = f"{userinfo}@" if userinfo else ""
    tail = "?" + "&".join(query) if query else ""
    return f"{scheme}://{user}{rest}{tail}"


def _param(item: str) -> str:
    return item.partition("=")[0].lower()


def redact_url(url: str) -> str:
    """The URL with every password (user part, `password=`, `sslpassword=`) shown as `***`."""
    if not is_url(url):
        return url
    scheme, userinfo, rest, query = _split(url)
    if ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":***"
    query = [f"{_param(q)}=***" if _param(q) in _SECRET_PARAMS else q for q in query]
    return _join(scheme, userinfo, rest, query)


def url_collection(url: str) -> str | None:
    """The URL's `collection` parameter (percent-decoding only `%2C` and `%2A`), or None."""
    for item in _split(url)[3]:
        if _param(item) == COLLECTION_PARAM:
            value = item.partition("=")[2]
            return value.replace("%2C", ",").replace("%2c", ",").replace("%2A", "*") or None
    return None


def with_collection(url: str, collection: str | None) -> str:
    """The URL with its `collection` parameter set to `collection` (removed for None)."""
    scheme, userinfo, rest, query = _split(url)
    query = [q for q in query if _param(q) != COLLECTION_PARAM]
    if collection:
        query.append(f"{COLLECTION_PARAM}={collection}")
    return _join(scheme, userinfo, rest, query)


def connect_url(url: str) -> str:
    """What libpq gets: the URL without noteseek's own `collection` parameter."""
    return with_collection(url, None)


def locator_key(url: str, collection: str | None = None) -> str:
    """The URL without any password, `collection` last: one key per database and collection
    selection, whoever spells the password how (a daemon's socket name and wire check)."""
    scheme, userinfo, rest, query = _split(url)
    chosen = collection or url_collection(url)
    query = [q for q in query if _param(q) not in (*_SECRET_PARAMS, COLLECTION_PARAM)]
    if chosen:
        query.append(f"{COLLECTION_PARAM}={chosen}")
    return _join(scheme.lower(), userinfo.split(":", 1)[0], rest, query)


def collection_slug(name: str) -> str:
    """A vault folder's name as a collection name: runs of other characters become '-'."""
    out: list[str] = []
    for ch in name:
        if ch in _SLUG_CHARS:
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-") or "vault"


class DatabaseUrl:
    """A server database as an index locator. Prints without its password; `url` is whole.

    Stands where a file `Path` stands for the SQLite backend: `exists()` is True (whether the
    database, its schema and the collection exist is known only by connecting, which reports
    what is missing) and `expanduser()` is the URL itself. Not a `PathLike`: `os.fspath` of it
    fails rather than making a file called `postgresql:`.
    """

    __slots__ = ("_url",)

    def __init__(self, url: str) -> None:
        self._url = url.strip()

    @property
    def url(self) -> str:
        """The whole URL, password included: for connecting, never for showing."""
        return self._url

    @property
    def collection(self) -> str | None:
        """The collection selection the URL names (`name`, `a,b`, `*`), or None."""
        return url_collection(self._url)

    @property
    def has_password(self) -> bool:
        """Whether the URL itself holds a password (it must then never be written anywhere)."""
        return redact_url(self._url) != self._url

    @property
    def key(self) -> str:
        """The passwordless form (`locator_key`)."""
        return locator_key(self._url)

    def with_collection(self, collection: str | None) -> DatabaseUrl:
        """The same database with another collection selection."""
        return DatabaseUrl(with_collection(self._url, collection))

    def exists(self) -> bool:
        """True: a database is checked when it is opened (see the class docstring)."""
        return True

    def expanduser(self) -> DatabaseUrl:
        """The URL itself (so callers may treat it like a `Path`)."""
        return self

    def __str__(self) -> str:
        return redact_url(self._url)

    def __repr__(self) -> str:
        return f"DatabaseUrl({redact_url(self._url)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DatabaseUrl) and other._url == self._url

    def __hash__(self) -> int:
        return hash(("DatabaseUrl", self._url))
