# IP addresses, networks and interfaces as Python's ipaddress reads them: IPv4 dotted
# quads (RFC 791 notation; leading zeros are refused since Python 3.9.5), IPv6 text forms
# after RFC 4291 §2.2 (full, "::"-compressed, with an embedded IPv4 address) with an
# RFC 4007 §11 zone ("%eth0"), each optionally followed by "/" and a prefix length or a
# dotted net or host mask. Written for eval/codeine_refine_eval.py. Deliberate
# departures, so that the error paths run: octets and prefixes may be out of range or
# have leading zeros, groups may have five hex digits, there may be two "::" or too many
# groups, a zone may be empty. The wrong forms do not overlap the right ones (an octet
# of 256-299, not 250-299, beside 250-255), so that a value has one reading; the
# boundary prefix lengths (/30-/32, /127-/128) are written out, as a tester lists the
# edges of a range, not drawn by a regular expression.

<start>      ::= <v4> <suffix4>? | <v6> <zone>? <suffix6>?
<v4>         ::= <octet> "." <octet> "." <octet> "." <octet> \
               | <octet> "." <octet> "." <octet> \
               | <special4>
<special4>   ::= "127.0.0.1" | "10.1.2.3" | "192.168.0.1" | "172.16.5.4" | "169.254.1.1" \
               | "224.0.0.1" | "240.0.0.1" | "255.255.255.255" | "0.0.0.0" | "100.64.0.1" \
               | "192.0.2.1" | "198.51.100.7" | "8.8.8.8" | "192.0.0.9"
<octet>      ::= r"[0-9]" | r"[1-9][0-9]" | "1" r"[0-9]{2}" | "2" r"[0-4][0-9]" | "25" r"[0-5]" \
               | "0" r"[0-9]{1,2}" | "25" r"[6-9]" | "2" r"[6-9][0-9]" | r"[0-9]{4}" | "" | "x"
<suffix4>    ::= "/" <prefix4> | "/" <mask4> | "/" | "/" "x"
<prefix4>    ::= r"[0-9]" | r"[12][0-9]" | "30" | "31" | "32" | r"3[3-9]" | "0" r"[0-9]" | "+8"
<mask4>      ::= "255.255.255.0" | "255.255.0.0" | "255.0.0.0" | "255.255.255.255" | "0.0.0.0" \
               | "0.0.0.255" | "0.0.255.255" | "255.255.255.128" | "255.0.255.0" | "0.255.0.255" \
               | <octet> "." <octet> "." <octet> "." <octet>

<v6>         ::= (<h16> ":"){7} <h16> \
               | (<h16> ":"){6} <v4> \
               | <h16s>? "::" <h16s>? \
               | <h16s>? "::" (<h16> ":")* <v4> \
               | <special6> \
               | (<h16> ":"){8} <h16> \
               | <h16s>? "::" <h16s> "::" <h16s>? \
               | ":" <h16s> | <h16s> ":" | (<h16> ":"){3} <h16>
<h16s>       ::= <h16> (":" <h16>){0,6}
<h16>        ::= r"[0-9a-fA-F]{1,4}" | "0" | "ffff" | r"[0-9a-f]{5}" | "g"
<special6>   ::= "::1" | "::" | "fe80::1" | "fc00::1" | "ff02::1" | "2001:db8::1" | "::ffff:10.0.0.1" \
               | "2002:c000:0204::1" | "2001::1" | "64:ff9b::1.2.3.4" | "100::1" | "fec0::1" | "::ffff:0:0"
<zone>       ::= "%" r"[a-z0-9]{1,4}" | "%"
<suffix6>    ::= "/" <prefix6> | "/" | "/" <mask4>
<prefix6>    ::= r"[0-9]" | r"[1-9][0-9]" | "1" r"[01][0-9]" | "12" r"[0-6]" | "127" | "128" | r"129|200" | "064"
