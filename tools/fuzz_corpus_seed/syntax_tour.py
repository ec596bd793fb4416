import a.b as c, d
from ..x import (y as z, w,)
from . import *
@dec.x(1)
class K(B, metaclass=M):
    X : int = 8
    def f(self, a, /, b=1, *args, c, d=2, **kw) -> "r":
        """doc"""
        global g
        x = y = a[1:2, ::3], b[:, None]
        a, *b = c
        x += 1 if a else 2
        return [i for i in range(3) if i if not i], {k: v for k, v in d.items()}, {s for s in t}, (g for g in h)
def g():
    yield 1
    yield from x
    try:
        pass
    except (A, B) as e:
        raise X from e
    except:
        pass
    else:
        pass
    finally:
        del a[0], b.c
    with a as b, c:
        pass
    with (a as b, c as d,):
        pass
    while x < y <= z is not w not in v:
        break
    else:
        continue
    for i, j in k:
        pass
    else:
        pass
    assert x, "m"
    lambda: 0
    lambda a, *b, c=1, **d: a
    f(*a, b, c=1, **d)
    x = -a ** -b // c @ d | e ^ f & g << h >> i % j
    x = not a and b or c
    (y := 10)
    {**a, 'b': 1}
    0x10, 1_000, 1.5e-7, 1e16, 3j, 10**100, 0o17, 0b1, 1e999, .5, 5., 123456789012345678901234567890, 0xFFFFFFFFFFFFFFFFFFFF
    b'ab\x00' rb'\n'
    u"u" "v"
    f"a{x!r:>{w}} {y=} {z:}" "tail"
    ...
    None, True, False
    nonlocal q
