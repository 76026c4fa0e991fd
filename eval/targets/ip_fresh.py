"""Python's ipaddress as a target whose coverage is a function of the input alone.

The input is read as an address, a network (strict and not) and an interface, and the
properties a caller asks of them are read. ipaddress keeps caches across calls: each
version's net-mask table (`_netmask_cache`) and `functools.lru_cache` on some properties
(`is_private`, `is_global`); they are emptied before each input, since the runner is one
long-lived process and without this whether an input covers their lines depends on the
inputs run before it.
"""
import ipaddress
import itertools

_CACHED = [
    prop.fget
    for cls in vars(ipaddress).values() if isinstance(cls, type)
    for prop in vars(cls).values()
    if isinstance(prop, property) and hasattr(prop.fget, "cache_clear")
]
_PROPERTIES = ("is_private", "is_global", "is_multicast", "is_reserved", "is_loopback",
               "is_link_local", "is_unspecified", "is_site_local", "ipv4_mapped",
               "sixtofour", "teredo", "scope_id", "reverse_pointer", "exploded", "compressed")


def _read(value):
    for name in _PROPERTIES:
        getattr(value, name, None)


def target(text):
    ipaddress._BaseV4._netmask_cache.clear()
    ipaddress._BaseV6._netmask_cache.clear()
    for fget in _CACHED:
        fget.cache_clear()
    for make in (ipaddress.ip_address, ipaddress.ip_interface):
        try:
            value = make(text)
        except ValueError:
            continue
        _read(value)
        if isinstance(value, (ipaddress.IPv4Interface, ipaddress.IPv6Interface)):
            _read(value.network)
            str(value.with_netmask), str(value.with_hostmask)
    for strict in (True, False):
        try:
            net = ipaddress.ip_network(text, strict=strict)
        except ValueError:
            continue
        _read(net)
        net.num_addresses, net.broadcast_address, net.hostmask
        list(itertools.islice(net.hosts(), 3))
        try:
            net.supernet()
            list(itertools.islice(net.subnets(), 2))
        except ValueError:
            pass
