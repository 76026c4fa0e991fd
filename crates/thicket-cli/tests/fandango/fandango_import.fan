<start> ::= "x"
import random
