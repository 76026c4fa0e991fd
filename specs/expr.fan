# Arithmetic expressions ("Grammar for JavaScript expressions (simplified)"): Figure 1 of
#   N. Havrikov, A. Zeller, "Systematically Covering Input Structure", ASE 2019,
#   and Fig. 1 of its journal version by Havrikov, Kampmann and Zeller.
# The structure is reproduced exactly (the paper's Expr is <start>): no alternative or
# symbol is added or removed, because the bundled spec doubles as a test oracle for
# k-path counts. Note the left recursion in <AddExpr> and <MultExpr> is the paper's.

<start>      ::= <AddExpr>
<AddExpr>    ::= <MultExpr> | <AddExpr> ("+" | "-") <MultExpr>
<MultExpr>   ::= <UnaryExpr> | <MultExpr> ("*" | "/" | "%") <UnaryExpr>
<UnaryExpr>  ::= <Identifier> \
               | "+" <UnaryExpr> \
               | "-" <UnaryExpr> \
               | "++" <UnaryExpr> \
               | "--" <UnaryExpr> \
               | "(" <AddExpr> ")" \
               | <DecDigits>
<DecDigits>  ::= <DecDigit>+
<DecDigit>   ::= "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
<Identifier> ::= "x" | "y" | "z"
