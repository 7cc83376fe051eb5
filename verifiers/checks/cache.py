"""A small thread-safe cache of values derived from one object (a document, a page, a schema),
keyed by that object's identity and kept only while it is cached (so an id is never reused while
its entry lives). The pipeline verifies documents on several threads at once."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable, TypeVar

__all__ = ["IdentityCache"]

T = TypeVar("T")


class IdentityCache:
    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[int, Hashable], tuple[Any, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_make(self, owner: Any, key: Hashable, make: Callable[[], T]) -> T:
        """The cached value for (owner, key), made (outside the lock) when missing."""
        k = (id(owner), key)
        with self._lock:
            hit = self._items.get(k)
            if hit is not None and hit[0] is owner:
                self._items.move_to_end(k)
                return hit[1]
        value = make()
        with self._lock:
            self._items[k] = (owner, value)
            self._items.move_to_end(k)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value
