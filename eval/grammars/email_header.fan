# Values of e-mail Date, From, To and Cc header fields, after RFC 5322 ("Internet Message
# Format"): §3.3 date-time (day-of-week, date, time, zone) with the obsolete forms of §4.3
# (two-digit years, alphabetic zones such as "EST" or military letters, "-0000"), and §3.4
# addresses (addr-spec, name-addr with a display name of words and quoted strings, angle
# addresses with an obsolete route, groups, domain literals) with §3.2.2 comments.
# Written for eval/codeine_refine_eval.py (Python's email.utils and email._parseaddr,
# the permissive parsers of both). Deliberate departures, so that the lenient paths run:
# the forms found in old mail (RFC 850 dates "12-Dec-98", the month before the day, the
# year before the time, a time with '.' separators, spaces missing or doubled, a stray
# comma) and a few plainly broken values (an unclosed quote, comment or angle bracket,
# a missing '@'), which a parser must survive.

<start>        ::= <date_time> | <address_list>

# Dates
<date_time>    ::= (<day_name> <comma> <sp>)? <date> <sp> <time> (<sp> <zone>)? <junk>? \
                 | <day_name> <sp> <month> <sp> <day> <sp> <time> <sp> <year> \
                 | (<day_name> <comma> <sp>)? <day> "-" <month> "-" <year> <sp> <time> (<sp> <zone>)? \
                 | (<day_name> <comma> <sp>)? <date> <sp> <zone>
<day_name>     ::= "Mon" | "Tue" | "Wed" | "Thu" | "Fri" | "Sat" | "Sun" | "monday" | "Thursday" | "Xyz"
<comma>        ::= "," | "" | " ,"
<sp>           ::= " " | "  " | "\t"
<date>         ::= <day> <sp> <month> <sp> <year> \
                 | <month> <sp> <day> <sp> <year> \
                 | <day> <sp> <month> <sp> <year> ","
<day>          ::= <day_number> | <day_number> "," | "0" | "x"
<day_number>   ::= r"[1-9]" | r"[0-2][0-9]" | "3" r"[01]"
<month>        ::= "Jan" | "Feb" | "Mar" | "Apr" | "May" | "Jun" | "Jul" | "Aug" | "Sep" | "Oct" \
                 | "Nov" | "Dec" | "january" | "JUNE" | "sept" | "Foo"
<year>         ::= r"[12][0-9]{3}" | r"[0-9]{2}" | r"[0-9]{1,3}" | "y2k"
<time>         ::= <two> ":" <two> (":" <two>)? \
                 | <two> "." <two> ("." <two>)? \
                 | <two> ":" <two> ":" <two> ":" <two> \
                 | <two> \
                 | <two> ":" <two> ","
<two>          ::= r"[0-2][0-9]" | r"[0-5][0-9]" | r"[0-9]" | "aa"
<zone>         ::= r"[+-]" r"[01][0-9][0-5][0-9]" | "-0000" | "+0000" \
                 | "UT" | "UTC" | "GMT" | "Z" | "EST" | "EDT" | "CST" | "CDT" | "MST" | "MDT" | "PST" \
                 | "PDT" | "est" | "A" | "M" | "N" | "Y" | "CET" | r"[+-][0-9]{1,3}" | "+bad"
<junk>         ::= <sp> "(" r"[A-Za-z ]{0,6}" ")" | <sp> "extra"

# Addresses
<address_list> ::= <address> (<list_sep> <address>)*
<list_sep>     ::= "," | ", " | " , " | ",," | ";"
<address>      ::= <mailbox> | <group>
<group>        ::= <phrase> ":" (<mailbox> ("," <sp>? <mailbox>)*)? ";"?
<mailbox>      ::= <cfws>? <name_addr> <cfws>? | <cfws>? <addr_spec> <cfws>?
<name_addr>    ::= (<phrase> <sp>?)? <angle_addr>
<angle_addr>   ::= "<" <route>? <addr_spec> ">" | "<>" | "<" <addr_spec> | "<" <sp> <addr_spec> <sp> ">"
<route>        ::= "@" <domain> ("," "@" <domain>)* ":"
<phrase>       ::= <word> (<sp> <word>)* | <word> "." <word>
<word>         ::= <atom> | <quoted_string>
<atom>         ::= r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,6}"
<quoted_string> ::= "\"" <qchar>* "\"" | "\"" <qchar>*
<qchar>        ::= r"[ !#-\[\]-~]" | "\\" r"[ -~]" | ","
<addr_spec>    ::= <local_part> "@" <domain> | <local_part> | <local_part> " @ " <domain> | "@" <domain>
<local_part>   ::= <atom> ("." <atom>)* | <quoted_string> | <atom> "." <sp> <atom>
<domain>       ::= <atom> ("." <atom>)* | <domain_literal> | <atom> " . " <atom>
<domain_literal> ::= "[" r"[0-9.]{1,8}" "]" | "[" r"[a-z\\:]{0,4}" "]" | "[" r"[0-9]{1,3}"
<cfws>         ::= <sp>? <comment> <sp>? | <sp>
<comment>      ::= "(" <ccontent>* ")" | "(" <ccontent>*
<ccontent>     ::= r"[ -'*-\[\]-~]" | "\\" r"[ -~]" | <comment>
