# Markdown: a practical subset of CommonMark (CommonMark Spec 0.31.2, section numbers
# of that version): §4.1 thematic breaks, §4.2 ATX headings (with optional closing
# sequence), §4.5 fenced code blocks (``` and ~~~, optional info string), §4.8
# paragraphs, §4.9 blank lines, §5.1 block quotes, §5.2 list items and §5.3 lists
# (bullet '-' '*' '+', ordered '1.' '1)'), §6.1 code spans, §6.2 emphasis and strong
# emphasis (* and _), §6.3 inline links with optional title, §6.4 images, §6.7 hard line
# breaks (two spaces or backslash before the line ending), §6.8 soft line breaks.
# Deliberate restrictions, so that every generated construct is parsed as exactly that
# construct (one generated block = one CommonMark block, one inline = one inline):
#   - blocks are separated by one blank line; setext headings, indented code, HTML,
#     link reference definitions, autolinks, entities and backslash escapes are left out;
#   - lines of paragraphs, list items and block quotes start with a letter, so no line
#     can be read as the start of another block (list marker, heading, fence, '>');
#   - inline elements are separated by single spaces, and words, emphasis text, link
#     text and code spans use character sets that cannot open other inlines;
#   - each list uses one marker ('-', '*', '+', or '.'/')' after the number); block
#     quotes hold one paragraph; lists are not nested.
# Note: two adjacent lists with the same marker (separated by the blank line) are one
# loose list for CommonMark (§5.3).

<start>            ::= <block> ("\n" <block>)*
<block>            ::= <atx_heading> \
                     | <paragraph> \
                     | <bullet_list> \
                     | <ordered_list> \
                     | <block_quote> \
                     | <fenced_code> \
                     | <thematic_break>

<thematic_break>   ::= "***\n" | "---\n" | "___\n" | "* * *\n" | "- - -\n"
<atx_heading>      ::= <heading_marker> " " <inline_line> (" " "#"+)? "\n"
<heading_marker>   ::= "#" | "##" | "###" | "####" | "#####" | "######"
<paragraph>        ::= <text_line> (<line_break> <text_line>)* "\n"
<line_break>       ::= "\n" | <hard_break>
<hard_break>       ::= "  \n" | "\\\n"
<bullet_list>      ::= ("- " <text_line> "\n")+ \
                     | ("* " <text_line> "\n")+ \
                     | ("+ " <text_line> "\n")+
<ordered_list>     ::= (<list_number> ". " <text_line> "\n")+ \
                     | (<list_number> ") " <text_line> "\n")+
<list_number>      ::= r"[0-9]{1,9}"
<block_quote>      ::= ("> " <text_line> "\n")+
<fenced_code>      ::= "```" <info_string>? "\n" <code_line>* "```\n" \
                     | "~~~" <info_string>? "\n" <code_line>* "~~~\n"
<info_string>      ::= r"[a-z]{1,8}"
# any printable ASCII but '`' and '~', so no line closes the fence early
<code_line>        ::= r"[ -_a-}]{0,30}" "\n"

# inline content
<text_line>        ::= <lead_word> (" " <inline>)*
<inline_line>      ::= <inline> (" " <inline>)*
<inline>           ::= <word> | <emphasis> | <strong> | <code_span> | <link> | <image>
<lead_word>        ::= r"[A-Za-z][A-Za-z0-9]{0,7}[.,;:?!]?"
<word>             ::= r"[A-Za-z0-9]{1,8}[.,;:?!]?"
<words>            ::= <plain_word> (" " <plain_word>)*
<plain_word>       ::= r"[A-Za-z0-9]{1,8}"
<emphasis>         ::= "*" <words> "*" | "_" <words> "_"
<strong>           ::= "**" <words> "**" | "__" <words> "__"
# no backtick; no space at either end (CommonMark would strip one)
<code_span>        ::= "`" r"[!-_a-~]([ -_a-~]{0,10}[!-_a-~])?" "`"
<link>             ::= "[" <words> "](" <destination> <link_title>? ")"
<image>            ::= "![" <words> "](" <destination> <link_title>? ")"
<link_title>       ::= " \"" <words> "\""
<destination>      ::= r"https?://[a-z]{1,8}\.(com|org|net)(/[a-z0-9]{1,6}){0,3}" \
                     | r"(/[a-z0-9]{1,6}){1,3}" \
                     | r"[a-z]{1,8}\.(md|html|png)"
