<start> ::= "a"{
