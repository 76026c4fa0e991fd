<start> ::= "a";;
