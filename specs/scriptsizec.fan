# Scriptsize-C: ISLa's C subject (Steinhöfel & Zeller, "Input Invariants", ESEC/FSE
# 2022, §6): Tiny-C (Marc Feeley's Tiny-C compiler, as in Kartik Talwar's gist
# https://gist.github.com/KartikTalwar/3095780) plus explicit declarations
# "int <id>;" and "int <id> = <expr>;". Structure and nonterminal names (underscores
# included) follow SCRIPTSIZE_C_GRAMMAR in rindPHI/isla
# (src/isla_formalizations/scriptsizec.py), and the literal splitting inside each
# alternative is ISLa's, so ISLa's constraints apply unchanged, e.g. def-use
#   forall <expr> expr in start: forall <id> use_id in expr:
#     exists <declaration> decl="int {<id> def_id}[ = <expr>];" in start:
#       (level("GE", "<block>", decl, expr) and (before(decl, expr) and (= use_id def_id)))
# and no-redef over the same match expression.
# Statement and expression forms match ISO C (C11 §6.8 statements, §6.5.16 assignment,
# §6.5.8 '<', §6.5.6 '+' '-'); identifiers are single lowercase letters, as in Tiny-C.
# One deliberate change: ISLa writes <digits> ::= <digit><int> | <digit>; here
# <digits> is the plain digit sequence it evidently means (same language).

<start>           ::= <statement>
<statement>       ::= <block>
                    | "if" <paren_expr> " " <statement> " else " <statement>
                    | "if" <paren_expr> " " <statement>
                    | "while" <paren_expr> " " <statement>
                    | "do " <statement> " while" <paren_expr> ";"
                    | <expr> ";"
                    | ";"
<block>           ::= "{" <statements> "}"
<statements>      ::= <block_statement> <statements> | ""
<block_statement> ::= <statement> | <declaration>
<declaration>     ::= "int " <id> " = " <expr> ";" | "int " <id> ";"
<paren_expr>      ::= "(" <expr> ")"
<expr>            ::= <id> " = " <expr> | <test>
<test>            ::= <sum> " < " <sum> | <sum>
<sum>             ::= <sum> " + " <term> | <sum> " - " <term> | <term>
<term>            ::= <paren_expr> | <id> | <int>
<id>              ::= "a" | "b" | "c" | "d" | "e" | "f" | "g" | "h" | "i" | "j" | "k" | "l"
                    | "m" | "n" | "o" | "p" | "q" | "r" | "s" | "t" | "u" | "v" | "w" | "x"
                    | "y" | "z"
<int>             ::= <digit_nonzero> <digits> | <digit>
<digits>          ::= <digit> <digits> | <digit>
<digit>           ::= "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
<digit_nonzero>   ::= "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"

# Constraints (ISLa's): `thicket check` checks them, `thicket generate` satisfies them.
# Every variable is declared before its use, in the same or an enclosing block:
where forall <expr> expr in start: forall <id> use_id in expr:
  exists <declaration> decl="int {<id> def_id}[ = <expr>];" in start:
    (level("GE", "<block>", decl, expr) and (before(decl, expr) and (= use_id def_id)))
# No variable is declared twice:
where forall <declaration> declaration="int {<id> def_id}[ = <expr>];" in start:
  forall <declaration> other_declaration="int {<id> other_def_id}[ = <expr>];" in start:
    (same_position(declaration, other_declaration) xor not (= def_id other_def_id))
