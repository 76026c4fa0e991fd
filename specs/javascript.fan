# A JavaScript (ECMAScript 5) subset for grammar-based whitebox fuzzing
# (docs/whitebox.md). Written for thicket; its tokens are the literals written in the
# rules below and the regular rules <identifier>, <number> and <string>; <_> and <__>
# hold only spaces (separators, not tokens). Like the paper's ECMA grammar it
# over-approximates what a parser accepts: `break` outside loops, identifiers that are
# keywords, `return` outside functions.
<start> ::= <_> <statement> (<_> <statement>)* <_>

<statement> ::= <var_stmt> | <expr_stmt> | <if_stmt> | <while_stmt> | <do_stmt> \
              | <for_stmt> | <block> | <return_stmt> | <function_decl> | ";" \
              | <break_stmt> | <continue_stmt> | <throw_stmt> | <try_stmt> | <switch_stmt>
<block> ::= "{" <_> (<statement> <_>)* "}"
<var_stmt> ::= "var" <__> <var_decl> (<_> "," <_> <var_decl>)* <_> ";"
<var_decl> ::= <identifier> (<_> "=" <_> <assign_expr>)?
<expr_stmt> ::= <expression> <_> ";"
<if_stmt> ::= "if" <_> "(" <_> <expression> <_> ")" <_> <statement> (<_> "else" <__> <statement>)?
<while_stmt> ::= "while" <_> "(" <_> <expression> <_> ")" <_> <statement>
<do_stmt> ::= "do" <__> <statement> <_> "while" <_> "(" <_> <expression> <_> ")" <_> ";"
<for_stmt> ::= "for" <_> "(" <_> (<for_init> <_>)? ";" <_> (<expression> <_>)? ";" <_> (<expression> <_>)? ")" <_> <statement> \
             | "for" <_> "(" <_> ("var" <__>)? <identifier> <__> "in" <__> <expression> <_> ")" <_> <statement>
<for_init> ::= "var" <__> <var_decl> (<_> "," <_> <var_decl>)* | <expression>
<return_stmt> ::= "return" (<__> <expression>)? <_> ";"
<break_stmt> ::= "break" <_> ";"
<continue_stmt> ::= "continue" <_> ";"
<throw_stmt> ::= "throw" <__> <expression> <_> ";"
<try_stmt> ::= "try" <_> <block> <_> (<catch_clause> | <finally_clause> | <catch_clause> <_> <finally_clause>)
<catch_clause> ::= "catch" <_> "(" <_> <identifier> <_> ")" <_> <block>
<finally_clause> ::= "finally" <_> <block>
<switch_stmt> ::= "switch" <_> "(" <_> <expression> <_> ")" <_> "{" <_> (<case_clause> <_>)* "}"
<case_clause> ::= ("case" <__> <expression> | "default") <_> ":" (<_> <statement>)*
<function_decl> ::= "function" <__> <identifier> <_> <params> <_> <block>
<params> ::= "(" <_> (<identifier> (<_> "," <_> <identifier>)* <_>)? ")"

<expression> ::= <assign_expr> (<_> "," <_> <assign_expr>)*
<assign_expr> ::= <conditional> \
                | <call_member> <_> ("=" | "+=" | "-=" | "*=" | "/=" | "%=") <_> <assign_expr>
<conditional> ::= <or_expr> (<_> "?" <_> <assign_expr> <_> ":" <_> <assign_expr>)?
<or_expr> ::= <or_expr> <_> "||" <_> <and_expr> | <and_expr>
<and_expr> ::= <and_expr> <_> "&&" <_> <equality> | <equality>
<equality> ::= <equality> <_> ("==" | "!=" | "===" | "!==") <_> <relational> | <relational>
<relational> ::= <relational> <_> ("<" | ">" | "<=" | ">=") <_> <additive> \
               | <relational> <__> ("instanceof" | "in") <__> <additive> | <additive>
<additive> ::= <additive> <_> ("+" | "-") <__> <multiplicative> | <multiplicative>
<multiplicative> ::= <multiplicative> <_> ("*" | "/" | "%") <_> <unary> | <unary>
<unary> ::= <postfix> | ("!" | "~") <_> <unary> | ("-" | "+") <__> <unary> \
          | ("typeof" | "void" | "delete") <__> <unary> | ("++" | "--") <_> <call_member>
<postfix> ::= <call_member> (<_> ("++" | "--"))?
<call_member> ::= <primary> | <call_member> <_> "." <_> <identifier> \
                | <call_member> <_> "[" <_> <expression> <_> "]" | <call_member> <_> <arguments> \
                | "new" <__> <call_member> <_> <arguments>
<arguments> ::= "(" <_> (<assign_expr> (<_> "," <_> <assign_expr>)* <_>)? ")"
<primary> ::= "this" | <identifier> | <number> | <string> | "true" | "false" | "null" \
            | <array> | <object> | "(" <_> <expression> <_> ")" | <function_expr>
<array> ::= "[" <_> (<assign_expr> (<_> "," <_> <assign_expr>)* <_>)? "]"
<object> ::= "{" <_> (<property> (<_> "," <_> <property>)* <_>)? "}"
<property> ::= (<identifier> | <string> | <number>) <_> ":" <_> <assign_expr>
<function_expr> ::= "function" (<__> <identifier>)? <_> <params> <_> <block>

<identifier> ::= r"[a-z_][a-z0-9_]{0,3}"
<number> ::= r"[0-9]{1,3}(\.[0-9]{1,2})?"
<string> ::= r"\"[a-z ]{0,4}\"" | r"'[a-z]{0,4}'"
<_> ::= " "{0,1}
<__> ::= " "
