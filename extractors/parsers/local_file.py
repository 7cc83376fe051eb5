"""Opening a local input file: only a regular file, and a symbolic link only when asked.

A folder of documents is untrusted: a link in it may point at `/etc/shadow` (read as root, it
would be stored and copied into results), and a named pipe or a device blocks or never ends. So
an input is opened with O_NOFOLLOW (unless `follow_links`) and O_NONBLOCK (opening a pipe does
not wait for a writer), and refused unless fstat says it is a regular file; the checks are on the
open descriptor, so the file cannot be swapped between the check and the read.
"""
from __future__ import annotations

import errno
import os
import stat

from docassay.extractors.errors import ParseError

__all__ = ["open_regular", "describe_mode"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def describe_mode(mode: int) -> str:
    """What a file of `st_mode` is, in words ("a named pipe", ...)."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_regular(path: str, *, follow_links: bool = False) -> int:
    """A read-only descriptor of `path`, a regular file; ParseError (kind `not_a_file`) otherwise.

    The caller closes the descriptor. With `follow_links` a symbolic link is followed to its target
    (which must still be a regular file).
    """
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow_links else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and not follow_links:
            raise ParseError(f"{path!r} is a symbolic link, which docassay does not follow "
                             "(pass --follow-links to read what it points to)",
                             kind="not_a_file", source=path) from exc
        if exc.errno == errno.ENXIO:                       # a socket, or a pipe opened for writing
            raise ParseError(f"{path!r} is not a regular file", kind="not_a_file", source=path) from exc
        raise ParseError(f"cannot read {path!r}: {exc.strerror or exc}", kind="unreadable", source=path) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ParseError(f"{path!r} is {describe_mode(st.st_mode)}, not a regular file: not read",
                             kind="not_a_file", source=path)
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
