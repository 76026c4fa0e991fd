# Absolute URIs, RFC 3986 ("Uniform Resource Identifier (URI): Generic Syntax"):
#   §3 URI = scheme ":" hier-part [ "?" query ] [ "#" fragment ],
#   §3.1 scheme, §3.2 authority (§3.2.1 userinfo, §3.2.2 host: IP-literal / IPv4address /
#   reg-name with the IPv6address and dec-octet rules, §3.2.3 port), §3.3 path-abempty /
#   path-absolute / path-rootless / path-empty, segments and pchar, §3.4 query,
#   §3.5 fragment, §2.1 pct-encoded, §2.2 sub-delims, §2.3 unreserved.
# Deliberate restrictions, so that every output is also a URL that the WHATWG URL
# Standard (and Rust's url::Url::parse) accepts:
#   - <scheme> never names a WHATWG "special" scheme (http, https, ws, wss, ftp, file):
#     it is one of a few registered non-special schemes or contains a digit, '+', '-'
#     or '.'; special schemes (not file) appear only in <special_uri>, whose host is an
#     IPv4 address, an IPv6 literal or a DNS-style domain (no percent-encoding, single
#     hyphens only, so no IDNA "xn--" label) whose last label starts with a letter
#     (WHATWG parses a host ending in a number as IPv4);
#   - a port has at most 4 digits or is a 5-digit number up to 65535;
#   - a host is empty only when there is neither userinfo nor a port (WHATWG rejects
#     "s://@" and "s://:1");
#   - IPvFuture literals ("[v1.x]") are left out: WHATWG accepts only IPv6 in brackets.

<start>         ::= <uri> | <special_uri>
<uri>           ::= <scheme> ":" <hier_part> ("?" <query>)? ("#" <fragment>)?
<hier_part>     ::= "//" <authority> <path_abempty> \
                  | <path_absolute> \
                  | <path_rootless> \
                  | <path_empty>
<scheme>        ::= "urn" | "git" | "svn+ssh" | "ldap" | "mailto" | "tag" | "data" \
                  | <ALPHA> <scheme_char>* ("+" | "-" | "." | <DIGIT>) <scheme_char>* \
                  | <alpha_scheme>
# Any all-letter (ASCII) scheme but WHATWG's special http, https, ws, wss and ftp (in any case),
# by length: vnc, ssh, ftps, file, ... (file is special to WHATWG too, but a file URL
# with a host name is also a valid one; generation hardly ever spells it).
<alpha_scheme>  ::= r"(?i-u:[a-z]|[a-vx-z][a-z]|w[a-rt-z]|[a-eg-vx-z][a-z]{2}|f[a-su-z][a-z]|ft[a-oq-z]|w[a-rt-z][a-z]|ws[a-rt-z]|[a-gi-z][a-z]{3}|h[a-su-z][a-z]{2}|ht[a-su-z][a-z]|htt[a-oq-z]|[a-gi-z][a-z]{4}|h[a-su-z][a-z]{3}|ht[a-su-z][a-z]{2}|htt[a-oq-z][a-z]|http[a-rt-z]|[a-z]{6,})"
<scheme_char>   ::= <ALPHA> | <DIGIT> | "+" | "-" | "."

<authority>     ::= (<userinfo> "@")? <host> (":" <port>)? | ""
<userinfo>      ::= (<unreserved> | <pct_encoded> | <sub_delims> | ":")*
<host>          ::= <IP_literal> | <IPv4address> | <reg_name>
<port>          ::= <DIGIT>{0,4} \
                  | r"[1-5]" <DIGIT>{4} \
                  | "6" r"[0-4]" <DIGIT>{3} \
                  | "65" r"[0-4]" <DIGIT>{2} \
                  | "655" r"[0-2]" <DIGIT> \
                  | "6553" r"[0-5]"
<IP_literal>    ::= "[" <IPv6address> "]"
<IPv6address>   ::=                                  (<h16> ":"){6} <ls32> \
                  |                             "::" (<h16> ":"){5} <ls32> \
                  | <h16>?                      "::" (<h16> ":"){4} <ls32> \
                  | ((<h16> ":"){0,1} <h16>)?   "::" (<h16> ":"){3} <ls32> \
                  | ((<h16> ":"){0,2} <h16>)?   "::" (<h16> ":"){2} <ls32> \
                  | ((<h16> ":"){0,3} <h16>)?   "::" <h16> ":" <ls32> \
                  | ((<h16> ":"){0,4} <h16>)?   "::" <ls32> \
                  | ((<h16> ":"){0,5} <h16>)?   "::" <h16> \
                  | ((<h16> ":"){0,6} <h16>)?   "::"
<h16>           ::= <HEXDIG>{1,4}
<ls32>          ::= <h16> ":" <h16> | <IPv4address>
<IPv4address>   ::= <dec_octet> "." <dec_octet> "." <dec_octet> "." <dec_octet>
# 0-9, 10-99, 100-199, 200-249, 250-255:
<dec_octet>     ::= <DIGIT> \
                  | r"[1-9]" <DIGIT> \
                  | "1" <DIGIT>{2} \
                  | "2" r"[0-4]" <DIGIT> \
                  | "25" r"[0-5]"
# RFC 3986 allows an empty reg-name; see <authority> for the empty host.
<reg_name>      ::= (<unreserved> | <pct_encoded> | <sub_delims>)+

<path_abempty>  ::= ("/" <segment>)*
<path_absolute> ::= "/" (<segment_nz> ("/" <segment>)*)?
<path_rootless> ::= <segment_nz> ("/" <segment>)*
<path_empty>    ::= ""
<segment>       ::= <pchar>*
<segment_nz>    ::= <pchar>+
<pchar>         ::= <unreserved> | <pct_encoded> | <sub_delims> | ":" | "@"
<query>         ::= (<pchar> | "/" | "?")*
<fragment>      ::= (<pchar> | "/" | "?")*

<pct_encoded>   ::= "%" <HEXDIG> <HEXDIG>
<unreserved>    ::= <ALPHA> | <DIGIT> | "-" | "." | "_" | "~"
<sub_delims>    ::= "!" | "$" | "&" | "'" | "(" | ")" | "*" | "+" | "," | ";" | "="
<ALPHA>         ::= r"[A-Za-z]"
<DIGIT>         ::= r"[0-9]"
<HEXDIG>        ::= r"[0-9A-Fa-f]"

# WHATWG special schemes (not file, which takes no port) with a host that is a valid
# domain or address; the rest of the URI is as in <uri>.
<special_uri>   ::= <special_scheme> "://" (<userinfo> "@")? <special_host> (":" <port>)? \
                    <path_abempty> ("?" <query>)? ("#" <fragment>)?
<special_scheme> ::= "http" | "https" | "ws" | "wss" | "ftp"
<special_host>  ::= <IP_literal> | <IPv4address> | <domain>
<domain>        ::= (<label> ".")* <top_label> "."?
# single hyphens only, so no label can be an IDNA "xn--" label (which must be Punycode)
<label>         ::= <alphanum>+ ("-" <alphanum>+)*
<top_label>     ::= <ALPHA> <alphanum>* ("-" <alphanum>+)*
<alphanum>      ::= <ALPHA> | <DIGIT>
