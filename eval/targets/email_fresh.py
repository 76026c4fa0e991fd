"""Python's e-mail header parsers as a target: an input is a Date or an address-list
header value, and both readers run on it.

`email.utils.parsedate_tz` and `parsedate_to_datetime` (dates), `getaddresses` and
`parseaddr` (addresses, strict parsing as of Python 3.13 where it exists), and
`formataddr` on the pairs read back. email._parseaddr keeps no cache, so coverage is a
function of the input alone.
"""
from email import utils


def target(text):
    utils.parsedate_tz(text)
    try:
        utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        pass
    for name, addr in utils.getaddresses([text]):
        utils.formataddr((name, addr))
    utils.parseaddr(text)
